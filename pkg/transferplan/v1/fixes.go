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
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Every *LayoutError ends with the change that would fix it (LayoutError.Fix).
// Local problems (units, items) get their fix where they are found; a pair
// that the transfer protocol cannot bridge gets the TP sizes that would
// work, found by planning the same model at other TP sizes: the buffers'
// geometry says how many distinct heads (or state channels) the model has
// per token row, so items at another TP follow the engine's rule (max(heads
// / TP, 1) heads per rank; state channels / TP).

// classify is classifyLayout with the fix of a refusal worked out.
func classify(l Layout) (*Planner, error) {
	p, err := classifyLayout(l)
	var le *transferplan.LayoutError
	if errors.As(err, &le) && le.Fix == "" {
		le.WithFix(suggestFix(l, le))
	}
	return p, err
}

// suggestFix: the TP sizes that would work, or what to change in bytes.
func suggestFix(l Layout, le *transferplan.LayoutError) string {
	tp := tpFix(l)
	if le.Reason == transferplan.ReasonItemNotTokenAligned {
		// The unit is the mistake; other TPs only avoid cutting rows.
		fix := "give units as one head of one token (a unit spanning the tokens of a page has no row boundaries)"
		if tp != "" {
			return fix + ", or: " + tp
		}
		return fix + ", or TP sizes that give both roles the same heads per rank"
	}
	if tp != "" {
		return tp
	}
	if le.Reason == transferplan.ReasonWholeStateCopyUnsafe {
		return "shard KV heads and state channels over the same ranks (the same TP per DP group on both roles), or replicate the state (equal state items)"
	}
	if l.Prefill.TPPerDP() != l.Decode.TPPerDP() {
		return fmt.Sprintf("give both roles the same TP per DP group (prefill %d, decode %d) and equal items", l.Prefill.TPPerDP(), l.Decode.TPPerDP())
	}
	return "give both roles equal items and units for every buffer"
}

// tpFix names the decode TP sizes (keeping the prefill's) and prefill TP
// sizes (keeping the decode's) with which the same model plans; "" when
// there are none or the buffers say too little about the model.
func tpFix(l Layout) string {
	if l.Attention != transferplan.MHA {
		return ""
	}
	l = distinctGeometries(l)
	shapes, heads, ok := estimateShapes(l)
	if !ok {
		return ""
	}
	P, D := l.Prefill.TPPerDP(), l.Decode.TPPerDP()
	dec := alternatives(l, shapes, false, D)
	pre := alternatives(l, shapes, true, P)
	var parts []string
	if len(dec) > 0 {
		parts = append(parts, fmt.Sprintf("decode TP %s%s (keeping prefill TP %d%s)", transferplan.OrList(dec), perDP(l.Decode), P, perDP(l.Prefill)))
	}
	if len(pre) > 0 {
		parts = append(parts, fmt.Sprintf("prefill TP %s%s (keeping decode TP %d%s)", transferplan.OrList(pre), perDP(l.Prefill), D, perDP(l.Decode)))
	}
	if len(parts) == 0 {
		return ""
	}
	fix := strings.Join(parts, ", or ") + " would work"
	if heads > 0 {
		fix += fmt.Sprintf(" with these %d KV heads", heads)
	}
	return fix
}

// distinctGeometries keeps one K and one V buffer per distinct KV geometry
// and one state buffer per distinct state geometry: whether a layout plans
// depends on each buffer alone and on the set of sources per decode rank,
// not on how often a geometry repeats, and the search plans dozens of
// variants.
func distinctGeometries(l Layout) Layout {
	type geometry struct{ pi, di, pu, du int64 }
	of := func(b BufferSpec) geometry {
		return geometry{b.PrefillItemBytes, b.DecodeItemBytes, b.PrefillUnitBytes, b.DecodeUnitBytes}
	}
	r := l
	r.KVBuffers, r.StateBuffers = nil, nil
	seen := map[geometry]bool{}
	for _, b := range l.KVBuffers {
		if g := of(b); !seen[g] {
			seen[g] = true
			k, v := b, b
			k.Kind, v.Kind = transferplan.TargetK, transferplan.TargetV
			r.KVBuffers = append(r.KVBuffers, k, v)
		}
	}
	seen = map[geometry]bool{}
	for _, b := range l.StateBuffers {
		if g := of(b); !seen[g] {
			seen[g] = true
			r.StateBuffers = append(r.StateBuffers, b)
		}
	}
	return r
}

func perDP(p transferplan.Parallelism) string {
	if p.DPSize > 1 {
		return " per DP group"
	}
	return ""
}

// shape is what one buffer's two items say about the model.
type shape struct {
	// whole: equal items, unequal totals: every rank holds the buffer whole.
	whole bool
	axis  Axis
	// distinct units per token row, rows per item, bytes per unit.
	distinct, rows, unit int64
}

// estimateShapes reads every buffer's shape; heads is the number of KV heads
// when every sharded KV buffer agrees on it and units are larger than a byte.
func estimateShapes(l Layout) (shapes []shape, heads int64, ok bool) {
	P, D, T := int64(l.Prefill.TPPerDP()), int64(l.Decode.TPPerDP()), int64(l.TokensPerPage)
	heads = -1
	for _, group := range [][]BufferSpec{l.KVBuffers, l.StateBuffers} {
		for _, b := range group {
			pu, du := b.PrefillUnitBytes, b.DecodeUnitBytes
			if pu != du || pu < 1 || b.PrefillItemBytes%pu != 0 || b.DecodeItemBytes%du != 0 {
				return nil, 0, false
			}
			pl, dl := b.PrefillItemBytes/pu, b.DecodeItemBytes/du
			s := shape{axis: shardedAxis(b.Kind), rows: 1, unit: pu}
			if pl*P != dl*D && b.PrefillItemBytes == b.DecodeItemBytes {
				s.whole = true
				shapes = append(shapes, s)
				continue
			}
			total := min(pl*P, dl*D)
			if s.axis == AxisKVHead && T > 1 && pl%T == 0 && dl%T == 0 && total%T == 0 {
				s.rows = T
			}
			s.distinct = total / s.rows
			if s.axis == AxisKVHead {
				if heads == -1 && pu > 1 && s.rows == T {
					heads = s.distinct
				} else if heads != s.distinct {
					heads = 0
				}
			}
			shapes = append(shapes, s)
		}
	}
	return shapes, max(heads, 0), true
}

// itemFor is one rank's item with t ranks on its side, and whether the
// engine can split the buffer so.
func (s shape) itemFor(t int64, keep int64) (int64, bool) {
	switch {
	case s.whole:
		return keep, true
	case s.axis == AxisKVHead && (s.distinct%t == 0 || t%s.distinct == 0):
		return s.rows * max(s.distinct/t, 1) * s.unit, true
	case s.axis != AxisKVHead && s.distinct%t == 0:
		return s.distinct / t * s.unit, true
	}
	return 0, false
}

// Bounds on the search: TP sizes tried and layouts planned per side.
const (
	maxTriedTP     = 256
	maxTriedLayout = 32
)

// alternatives are the TP sizes (per DP group) of one side, other than
// current, with which the layout plans, the other side kept.
func alternatives(l Layout, shapes []shape, prefill bool, current int) []int {
	limit := int64(2 * max(l.Prefill.TPPerDP(), l.Decode.TPPerDP()))
	for _, s := range shapes {
		limit = max(limit, s.distinct)
	}
	limit = min(limit, maxTriedTP)
	var out []int
	tried := 0
	for t := int64(1); t <= limit && tried < maxTriedLayout; t++ {
		if int(t) == current {
			continue
		}
		v, ok := variant(l, shapes, prefill, t)
		if !ok {
			continue
		}
		tried++
		if _, err := classifyLayout(v); err == nil {
			out = append(out, int(t))
		}
	}
	return out
}

// variant is the layout with t ranks per DP group on one side and that
// side's items as the engine would register them.
func variant(l Layout, shapes []shape, prefill bool, t int64) (Layout, bool) {
	v := l
	v.KVBuffers = append([]BufferSpec(nil), l.KVBuffers...)
	v.StateBuffers = append([]BufferSpec(nil), l.StateBuffers...)
	side := &v.Decode
	if prefill {
		side = &v.Prefill
	}
	side.TPSize = int(t) * side.DPSize
	i := 0
	for _, group := range [][]BufferSpec{v.KVBuffers, v.StateBuffers} {
		for j := range group {
			b := &group[j]
			keep := &b.DecodeItemBytes
			if prefill {
				keep = &b.PrefillItemBytes
			}
			item, ok := shapes[i].itemFor(t, *keep)
			if !ok {
				return l, false
			}
			*keep = item
			i++
		}
	}
	return v, true
}

// unitFix: equal units; a ratio of 2 or 4 is two KV cache dtypes.
func unitFix(pu, du int64) string {
	if r := dtypeRatio(pu, du); r != "" {
		return fmt.Sprintf("the units are %s apart, which is what KV caches of different dtypes give (float8 stores 1 byte per value, bfloat16 and float16 2): "+
			"run both fleets with the same --kv-cache-dtype and set the same kvCacheDtype on both roles (or equal prefillUnitBytes and decodeUnitBytes)", r)
	}
	return fmt.Sprintf("give both sides the unit of one KV head of one token (head_dim × dtype bytes) or one state channel: prefillUnitBytes and decodeUnitBytes both %d, or both %d, "+
		"whichever the model has", pu, du)
}

// dtypeRatio is "2×" or "4×" when one size is that multiple of the other.
func dtypeRatio(a, b int64) string {
	hi, lo := max(a, b), min(a, b)
	if lo > 0 && hi%lo == 0 && (hi/lo == 2 || hi/lo == 4) {
		return strconv.FormatInt(hi/lo, 10) + "×"
	}
	return ""
}

// alignFix: the nearest whole numbers of units.
func alignFix(field string, item, unit int64) string {
	lo := item / unit * unit
	if lo == 0 {
		return fmt.Sprintf("set %s to a whole number of %d-byte units (tokensPerPage × heads per rank × unit): %d is the nearest", field, unit, unit)
	}
	return fmt.Sprintf("set %s to a whole number of %d-byte units (tokensPerPage × heads per rank × unit): %d or %d are the nearest", field, unit, lo, lo+unit)
}

// CheckLayout validates and classifies a layout as EstimatePlanSize does,
// without working out the fix of a refusal: for callers that try many
// layouts (the TP sizes a model-aware pair's fix names).
func CheckLayout(l Layout) error {
	_, err := classifyLayout(l)
	return err
}
