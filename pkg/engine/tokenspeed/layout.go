/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package tokenspeed

// This file turns an explicit spec into the planner's input. It is the one
// place that knows how buffer groups expand to buffer indices (pointer
// order), which defaults apply (unit 1, the prefill item default, DP 1,
// tokensPerPage 1, MHA) and how spec kinds map to wire kinds.

import (
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

var wireKind = map[pdv1.KVBufferKind]transferplan.BufferKind{
	pdv1.KVTargetK: transferplan.TargetK,
	pdv1.KVTargetV: transferplan.TargetV,
	pdv1.KVDraftK:  transferplan.DraftK,
	pdv1.KVDraftV:  transferplan.DraftV,
}

// fromExplicit converts an explicit spec to a planner layout. It returns a
// *transferplan.LayoutError with ReasonInvalidLayout when a field the CRD
// would have rejected is broken (useful for manifests read from files).
func fromExplicit(spec pdv1.PDPairSpec) (planv1.Layout, error) {
	l := planv1.Layout{
		Attention:     transferplan.AttentionBackend(orDefault(string(spec.AttentionBackend), string(pdv1.AttentionMHA))),
		MLAL15Cache:   spec.MLAL15Cache,
		TokensPerPage: int(deref32(spec.TokensPerPage, 1)),
		Prefill:       parallelism(spec.Prefill),
		Decode:        parallelism(spec.Decode),
	}
	if err := l.Prefill.Validate("prefill"); err != nil {
		return l, err
	}
	if err := l.Decode.Validate("decode"); err != nil {
		return l, err
	}
	P, D := l.Prefill.TPPerDP(), l.Decode.TPPerDP()
	if err := checkBufferCounts(spec); err != nil {
		return l, err
	}
	for g, group := range spec.KVBuffers {
		field := fmt.Sprintf("kvBuffers[%d]", g)
		kind, ok := wireKind[group.Kind]
		if !ok {
			return l, invalid(field+".kind", "use TargetK, TargetV, DraftK or DraftV", "must be TargetK, TargetV, DraftK or DraftV, got %q", group.Kind)
		}
		bufs, err := expand(field, kind, group.BufferGeometry, P, D)
		if err != nil {
			return l, err
		}
		l.KVBuffers = append(l.KVBuffers, bufs...)
	}
	for g, group := range spec.StateBuffers {
		bufs, err := expand(fmt.Sprintf("stateBuffers[%d]", g), transferplan.MambaState, group.BufferGeometry, P, D)
		if err != nil {
			return l, err
		}
		l.StateBuffers = append(l.StateBuffers, bufs...)
	}
	return l, l.Validate()
}

// checkBufferCounts bounds the expansion before anything is allocated.
func checkBufferCounts(spec pdv1.PDPairSpec) error {
	var kv, state int64
	for _, g := range spec.KVBuffers {
		kv += max(int64(g.Count), 0)
	}
	for _, g := range spec.StateBuffers {
		state += max(int64(g.Count), 0)
	}
	if kv > planv1.MaxBuffers {
		return invalid("kvBuffers", "give one buffer per layer", "the groups hold %d buffers; at most %d are supported", kv, planv1.MaxBuffers)
	}
	if state > planv1.MaxBuffers {
		return invalid("stateBuffers", "give one buffer per layer", "the groups hold %d buffers; at most %d are supported", state, planv1.MaxBuffers)
	}
	return nil
}

func parallelism(f pdv1.FleetLayout) transferplan.Parallelism {
	return transferplan.Parallelism{TPSize: int(f.TensorParallelSize), DPSize: int(f.DataParallel())}
}

// expand turns one group into count buffers with resolved geometry.
func expand(field string, kind transferplan.BufferKind, g pdv1.BufferGeometry, P, D int) ([]planv1.BufferSpec, error) {
	if g.Count < 1 {
		return nil, invalid(field+".count", "give the number of layers the group covers, 1 or more", "must be at least 1, got %d", g.Count)
	}
	b := planv1.BufferSpec{
		Kind:             kind,
		Field:            field,
		DecodeItemBytes:  g.DecodeItemBytes,
		PrefillItemBytes: planv1.DefaultPrefillItemBytes(g.DecodeItemBytes, D, P),
		DecodeUnitBytes:  deref64(g.DecodeUnitBytes, 1),
		PrefillUnitBytes: deref64(g.PrefillUnitBytes, 1),
	}
	if g.PrefillItemBytes != nil {
		b.PrefillItemBytes = *g.PrefillItemBytes
	}
	if g.DecodeItemBytes <= 0 {
		return nil, invalid(field+".decodeItemBytes", "give the bytes of one page of one buffer on one decode rank", "must be positive, got %d", g.DecodeItemBytes)
	}
	if b.PrefillItemBytes <= 0 {
		if g.PrefillItemBytes == nil {
			return nil, invalid(field+".prefillItemBytes", "set prefillItemBytes to the bytes of one page on one prefill rank",
				"the default decodeItemBytes×decodeTP/prefillTP = %d×%d/%d is 0", g.DecodeItemBytes, D, P)
		}
		return nil, invalid(field+".prefillItemBytes", "give the bytes of one page of one buffer on one prefill rank", "must be positive, got %d", b.PrefillItemBytes)
	}
	out := make([]planv1.BufferSpec, g.Count)
	for i := range out {
		out[i] = b
	}
	return out, nil
}

// invalid is an InvalidLayout refusal of field, ending with its fix.
func invalid(field, fix, format string, args ...any) error {
	return (&transferplan.LayoutError{
		Reason:  transferplan.ReasonInvalidLayout,
		Field:   field,
		Message: field + ": " + fmt.Sprintf(format, args...),
	}).WithFix(fix)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func deref32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func deref64(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}
