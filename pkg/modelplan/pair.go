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

package modelplan

import (
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// Pair is a model and one layout of it.
type Pair struct {
	Model   *modelgeom.Model
	Options modelgeom.Options
	// MLAL15Cache: the prefill runs the MLA L1.5 cache.
	MLAL15Cache bool
}

var kinds = map[string]transferplan.BufferKind{
	modelgeom.TargetK: transferplan.TargetK, modelgeom.TargetV: transferplan.TargetV,
	modelgeom.DraftK: transferplan.DraftK, modelgeom.DraftV: transferplan.DraftV,
}

// Layout derives the pair's buffers and expands them into the planner's
// input, one buffer per layer, groups named kvBuffers[i] and
// stateBuffers[i] as the PDPair lists them.
func (p Pair) Layout() (planv1.Layout, *modelgeom.Pair, error) {
	d, err := p.Model.Derive(p.Options)
	if err != nil {
		return planv1.Layout{}, nil, err
	}
	o := p.Options
	l := planv1.Layout{Attention: transferplan.AttentionBackend(d.Attention), MLAL15Cache: p.MLAL15Cache,
		TokensPerPage: o.TokensPerPage,
		Prefill:       transferplan.Parallelism{TPSize: o.Prefill.TP, DPSize: o.Prefill.DP},
		Decode:        transferplan.Parallelism{TPSize: o.Decode.TP, DPSize: o.Decode.DP}}
	for i, g := range d.KVBuffers {
		l.KVBuffers = appendGroup(l.KVBuffers, g, kinds[g.Kind], fmt.Sprintf("kvBuffers[%d]", i))
	}
	for i, g := range d.StateBuffers {
		l.StateBuffers = appendGroup(l.StateBuffers, g, transferplan.MambaState, fmt.Sprintf("stateBuffers[%d]", i))
	}
	return l, d, nil
}

func appendGroup(to []planv1.BufferSpec, g modelgeom.Group, kind transferplan.BufferKind, field string) []planv1.BufferSpec {
	b := planv1.BufferSpec{Kind: kind, Field: field,
		PrefillItemBytes: g.PrefillItemBytes, DecodeItemBytes: g.DecodeItemBytes,
		PrefillUnitBytes: g.PrefillUnitBytes, DecodeUnitBytes: g.DecodeUnitBytes}
	for range g.Count {
		to = append(to, b)
	}
	return to
}

// Check refuses what the buffers' sizes cannot show: a hybrid model's
// convolution state holds, on every rank, that rank's share of the query,
// key and value channels as three separate runs (the engine shards the
// three segments of conv_dim one by one), so ranks of different TP sizes
// interleave the channels differently and no contiguous fragment converts
// one into the other. Only equal TP sizes per DP group, which move whole
// items, are right.
func (p Pair) Check() *transferplan.LayoutError {
	m, o := p.Model, p.Options
	P, D := o.Prefill.TP/max(o.Prefill.DP, 1), o.Decode.TP/max(o.Decode.DP, 1)
	if m.Family != modelgeom.FamilyHybrid || m.MambaLayers == 0 || P == D {
		return nil
	}
	le := &transferplan.LayoutError{Reason: transferplan.ReasonUnsupportedHeterogeneousTP, Field: "stateBuffers[0]",
		Message: fmt.Sprintf("stateBuffers[0] (convolution state of %d linear-attention layers): a rank holds its share of the query, key and value channels "+
			"as three runs (the engine shards the three segments of the %d channels separately), so prefill ranks holding 1/%d of each and decode ranks holding 1/%d "+
			"interleave them differently, and contiguous fragments would put channels in the wrong places", m.MambaLayers, m.ConvChannels, P, D)}
	valid := p.Model.ValidTPs()
	var fixes []string
	if slicesContains(valid, P) {
		fixes = append(fixes, fmt.Sprintf("decode TP %d per DP group (keeping prefill TP %d)", P, P))
	}
	if slicesContains(valid, D) {
		fixes = append(fixes, fmt.Sprintf("prefill TP %d per DP group (keeping decode TP %d)", D, D))
	}
	fix := "give both roles the same TP per DP group"
	if len(fixes) > 0 {
		fix += ": " + strings.Join(fixes, ", or ")
	}
	return le.WithFix(fix)
}

func slicesContains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// with is the pair with one role's TP per DP group set to t.
func (p Pair) with(prefill bool, t int) Pair {
	q := p
	if prefill {
		q.Options.Prefill.TP = t * max(q.Options.Prefill.DP, 1)
	} else {
		q.Options.Decode.TP = t * max(q.Options.Decode.DP, 1)
	}
	return q
}

// Alternatives are the TP sizes per DP group the engine can run the model
// with (modelgeom.Model.ValidTPs) at which the pair plans: decode sizes with
// the prefill kept, prefill sizes with the decode kept, the current ones left
// out.
func (p Pair) Alternatives() (decode, prefill []int) {
	valid := p.Model.ValidTPs()
	for _, side := range []struct {
		prefill bool
		role    modelgeom.Role
		out     *[]int
	}{{false, p.Options.Decode, &decode}, {true, p.Options.Prefill, &prefill}} {
		current := side.role.TP / max(side.role.DP, 1)
		for _, t := range valid {
			if t == current {
				continue
			}
			q := p.with(side.prefill, t)
			l, _, err := q.Layout()
			if err == nil && q.Check() == nil && planv1.CheckLayout(l) == nil {
				*side.out = append(*side.out, t)
			}
		}
	}
	return decode, prefill
}

// Fix names the TP sizes at which the pair would plan, "" when there are none.
func (p Pair) Fix() string {
	dec, pre := p.Alternatives()
	perDP := func(r modelgeom.Role) string {
		if r.DP > 1 {
			return " per DP group"
		}
		return ""
	}
	o := p.Options
	var parts []string
	if len(dec) > 0 {
		parts = append(parts, fmt.Sprintf("decode TP %s%s (keeping prefill TP %d%s)", orList(dec), perDP(o.Decode), o.Prefill.TP/max(o.Prefill.DP, 1), perDP(o.Prefill)))
	}
	if len(pre) > 0 {
		parts = append(parts, fmt.Sprintf("prefill TP %s%s (keeping decode TP %d%s)", orList(pre), perDP(o.Prefill), o.Decode.TP/max(o.Decode.DP, 1), perDP(o.Decode)))
	}
	if len(parts) == 0 {
		return ""
	}
	m := p.Model
	heads := fmt.Sprintf("these %d KV heads", m.KVHeads)
	if m.Family == modelgeom.FamilyMLA {
		heads = fmt.Sprintf("these %d attention heads", m.AttentionHeads)
	}
	return strings.Join(parts, ", or ") + " would work with " + heads + " (TP sizes the engine can run " + m.String() + " with)"
}

// tpReasons are the refusals another TP size can cure.
var tpReasons = map[transferplan.Reason]bool{
	transferplan.ReasonUnsupportedHeterogeneousTP: true, transferplan.ReasonShardNotAligned: true,
	transferplan.ReasonItemSmallerThanShard: true, transferplan.ReasonWholeStateCopyUnsafe: true,
	transferplan.ReasonItemNotTokenAligned: true,
}

// Explain gives a planner refusal of the pair the fix of the model: the TP
// sizes the engine can run the model with that plan, in place of those the
// planner read from the bytes. Other errors are returned as they are.
func (p Pair) Explain(le *transferplan.LayoutError) *transferplan.LayoutError {
	if le == nil || !tpReasons[le.Reason] {
		return le
	}
	if fix := p.Fix(); fix != "" {
		le.ReplaceFix(fix)
	}
	return le
}

func orList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
