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
	"math/rand/v2"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// randomPagedLayout draws a layout with pages of 1 to 64 tokens: items are
// whole token rows (tokensPerPage × heads per rank × unit) except, now and
// then, a ragged one; heads split over ranks, replicated or anything; small
// units so that byte-by-byte simulation stays cheap.
func randomPagedLayout(rng *rand.Rand) Layout {
	sizes := []int{1, 2, 3, 4, 6, 8, 12, 16}
	P, D := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]
	pdp, ddp := []int{1, 1, 1, 2}[rng.IntN(4)], []int{1, 1, 1, 2}[rng.IntN(4)]
	b := mha(P*pdp, D*ddp).dp(pdp, ddp)
	isMLA := rng.IntN(7) == 0
	if isMLA {
		b = mla(P*pdp, D*ddp).dp(pdp, ddp)
		if rng.IntN(3) == 0 {
			b.l15()
		}
	}
	T := []int{1, 2, 4, 16, 64}[rng.IntN(5)]
	b.tokensPerPage(T)
	unit := []int64{1, 2, 3, 4, 8, 16}[rng.IntN(6)]
	heads := []int{1, 2, 4, 8, 16}[rng.IntN(5)]
	geometry := func(rows int64) (decodeItem, prefillItem int64) {
		row := rows * unit
		switch {
		case isMLA:
			n := int64(1+rng.IntN(4)) * row
			return n, n
		case rows > 1 && rng.IntN(8) == 0: // evenly sharded units, rows often ragged
			total := int64(P*D*(1+2*rng.IntN(3))) * unit
			return total / int64(D), total / int64(P)
		}
		switch rng.IntN(6) {
		case 0, 1, 2, 3:
			return int64(max(1, heads/D)) * row, int64(max(1, heads/P)) * row
		case 4:
			n := int64(1+rng.IntN(4)) * row
			return n, n
		default:
			return int64(1+rng.IntN(8)) * row, int64(1+rng.IntN(8)) * row
		}
	}
	layers := 1 + rng.IntN(3)
	di, pi := geometry(int64(T))
	b.kvItems(transferplan.TargetK, layers, di, pi, unit).kvItems(transferplan.TargetV, layers, di, pi, unit)
	if rng.IntN(4) == 0 {
		di, pi = geometry(int64(T))
		b.kvItems(transferplan.DraftK, 1, di, pi, unit).kvItems(transferplan.DraftV, 1, di, pi, unit)
	}
	if n := []int{0, 0, 1, 2}[rng.IntN(4)]; n > 0 {
		di, pi = geometry(1)
		b.state(n, di, pi, unit)
	}
	return b.build()
}

// oneToken is l with pages of one token: every KV item divided by the
// tokens per page. ok is false when some KV item is not whole token rows.
func oneToken(l Layout) (Layout, bool) {
	T := int64(l.TokensPerPage)
	one := l
	one.TokensPerPage = 1
	one.KVBuffers = append([]BufferSpec(nil), l.KVBuffers...)
	for i, b := range one.KVBuffers {
		if b.PrefillItemBytes%(T*b.PrefillUnitBytes) != 0 || b.DecodeItemBytes%(T*b.DecodeUnitBytes) != 0 {
			return l, false
		}
		one.KVBuffers[i].PrefillItemBytes, one.KVBuffers[i].DecodeItemBytes = b.PrefillItemBytes/T, b.DecodeItemBytes/T
	}
	return one, true
}

// TestTokenMajorPlanProperties: over thousands of random layouts with 1 to
// 64 tokens per page, executing the plans as the reference prefill does puts
// the prefill byte of the same token and head in every decode byte; a
// layout of whole token rows is refused only when its one-token version is;
// and no decode rank's plan has more than tokensPerPage times the fragments
// of its one-token plan.
func TestTokenMajorPlanProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 13))
	stats := map[string]int{}
	for i := range 4000 {
		l := randomPagedLayout(rng)
		set, err := Plan(l)
		one, rowsWhole := oneToken(l)
		var oneSet *transferplan.PlanSet
		var oneErr error
		if rowsWhole {
			oneSet, oneErr = Plan(one)
		}
		if err != nil {
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason == "" || le.Message == "" {
				t.Fatalf("layout %d: error without reason: %v", i, err)
			}
			if rowsWhole && oneErr == nil {
				t.Fatalf("layout %d (%+v): refused (%v), but its one-token version is planned", i, l, err)
			}
			stats["refused "+string(le.Reason)]++
			continue
		}
		if err := checkPlanSet(l, set.Plans); err != nil {
			t.Fatalf("layout %d (%+v): %v", i, l, err)
		}
		if err := simulateBytes(rng, l, set.Plans, 3); err != nil {
			t.Fatalf("layout %d (%+v): %v", i, l, err)
		}
		stats[string(set.Plans[0].PlanKind)]++
		if !rowsWhole {
			continue
		}
		if oneErr != nil {
			t.Fatalf("layout %d (%+v): planned, but its one-token version is refused: %v", i, l, oneErr)
		}
		split := false
		for d, p := range set.Plans {
			n, n1 := p.FragmentCount(), oneSet.Plans[d].FragmentCount()
			if n > l.TokensPerPage*n1 {
				t.Fatalf("layout %d (%+v): decode rank %d has %d fragments, more than %d tokens × %d", i, l, d, n, l.TokensPerPage, n1)
			}
			split = split || n > n1
		}
		if split {
			stats["split into token rows"]++
		} else if l.TokensPerPage > 1 && set.Plans[0].PlanKind == transferplan.PlanFragmented {
			stats["fragmented, whole rows"]++
		}
	}
	t.Logf("4000 random paged layouts: %v", stats)
	if stats["split into token rows"] < 300 || stats["fragmented, whole rows"] < 100 || stats[string(transferplan.PlanMLA)] < 100 ||
		stats[string(transferplan.PlanIdentity)] < 100 || stats["refused "+string(transferplan.ReasonItemNotTokenAligned)] < 20 {
		t.Fatalf("the generator covers too little: %v", stats)
	}
}
