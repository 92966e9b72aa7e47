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

package v1

import (
	"fmt"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// ComposeCross is the layout of a cross-generation pair mid-rollout: an
// instance of one generation's prefill layout meeting one of another
// generation's decode layout. A pair that gives its buffers' item sizes
// (kvBuffers, no model) gives them for its own TP sizes only, but each
// side's sizes are a property of that side alone: a prefill rank's item
// and unit lengths are what its bootstrap server answers whatever decode it
// meets, and a decode rank's are its own. So the prefill side comes from
// the record of a set made for the cross pair's prefill layout, the decode
// side from a set made for its decode layout.
//
// That holds only while the two generations differ in their parallelism
// alone: a different attention backend, page size, L1.5 flag or set of
// buffers is another model or cache, and is refused (InvalidLayout, naming
// what differs), never guessed.
func ComposeCross(prefillSide, decodeSide transferplan.LayoutRecord) (Layout, error) {
	if err := sameCache(prefillSide, decodeSide); err != nil {
		return Layout{}, err
	}
	rec := decodeSide
	rec.Prefill = prefillSide.Prefill
	rec.PrefillKVItemLens, rec.PrefillKVUnitLens = prefillSide.PrefillKVItemLens, prefillSide.PrefillKVUnitLens
	rec.PrefillStateItemLens, rec.PrefillStateUnitLens = prefillSide.PrefillStateItemLens, prefillSide.PrefillStateUnitLens
	l := FromRecord(rec)
	return l, l.Validate()
}

// sameCache refuses two records that differ in more than their roles'
// parallelism and item lengths.
func sameCache(p, d transferplan.LayoutRecord) error {
	differ := func(field, what string, pv, dv any) error {
		return (&transferplan.LayoutError{
			Reason: transferplan.ReasonInvalidLayout,
			Field:  field,
			Message: fmt.Sprintf("the set of prefill %s has %s %v, the set of decode %s has %v: the generations differ in more than their layouts, so no plan is composed for their cross pair",
				describeParallelism(p.Prefill), what, pv, describeParallelism(d.Decode), dv),
		}).WithFix("roll one generation fully before changing the model or cache, or describe the pair by spec.model")
	}
	switch {
	case p.Wire.OrV1() != transferplan.WireV1 || d.Wire.OrV1() != transferplan.WireV1:
		return differ("wire", "wire", p.Wire.OrV1(), d.Wire.OrV1())
	case p.AttentionBackend != d.AttentionBackend:
		return differ("attentionBackend", "attention backend", p.AttentionBackend, d.AttentionBackend)
	case p.MLAL15Cache != d.MLAL15Cache:
		return differ("mlaL15Cache", "MLA L1.5 cache", p.MLAL15Cache, d.MLAL15Cache)
	case p.TokensPerPage != d.TokensPerPage:
		return differ("tokensPerPage", "tokensPerPage", p.TokensPerPage, d.TokensPerPage)
	case !slices.Equal(p.KVBufferKinds, d.KVBufferKinds):
		return differ("kvBuffers", "KV buffers", describeKinds(p.KVBufferKinds), describeKinds(d.KVBufferKinds))
	case len(p.PrefillStateItemLens) != len(d.DecodeStateItemLens):
		return differ("stateBuffers", "state buffers", len(p.PrefillStateItemLens), len(d.DecodeStateItemLens))
	}
	return nil
}

func describeParallelism(p transferplan.Parallelism) string {
	return fmt.Sprintf("TP %d DP %d", p.TPSize, max(p.DPSize, 1))
}

// describeKinds is "160 (80 TargetK, 80 TargetV)": the count, then each
// kind's, in order of first appearance.
func describeKinds(kinds []transferplan.BufferKind) string {
	var order []transferplan.BufferKind
	n := map[transferplan.BufferKind]int{}
	for _, k := range kinds {
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	s := fmt.Sprintf("%d (", len(kinds))
	for i, k := range order {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", n[k], k)
	}
	return s + ")"
}
