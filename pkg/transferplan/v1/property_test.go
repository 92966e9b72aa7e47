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
	"math/rand/v2"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// randomLayout draws a layout that is often, not always, compatible: GQA
// head splits (including more prefill ranks than heads), replicated heads,
// state buffers, draft layers, DP attention, MLA and L1.5.
func randomLayout(rng *rand.Rand) Layout {
	sizes := []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64}
	P, D := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]
	pdp, ddp := []int{1, 1, 2, 4}[rng.IntN(4)], []int{1, 1, 2, 4}[rng.IntN(4)]
	b := mha(P*pdp, D*ddp).dp(pdp, ddp)
	if rng.IntN(5) == 0 {
		b = mla(P*pdp, D*ddp).dp(pdp, ddp)
		if rng.IntN(3) == 0 {
			b.l15()
		}
	}
	unit := []int64{1, 2, 64, 128, 256}[rng.IntN(5)]
	heads := []int{1, 2, 4, 6, 8, 12, 16, 32, 64, 128}[rng.IntN(10)]
	isMLA := b.l.Attention == transferplan.MLA
	geometry := func() (decodeItem, prefillItem int64) {
		if isMLA && rng.IntN(10) > 0 { // latent caches are whole on every rank
			n := int64(1+rng.IntN(8)) * unit
			return n, n
		}
		switch rng.IntN(4) {
		case 0, 1: // heads split over ranks, replicated beyond the head count
			return int64(max(1, heads/D)) * unit, int64(max(1, heads/P)) * unit
		case 2: // every rank holds everything
			n := int64(1+rng.IntN(4)) * unit
			return n, n
		default: // anything
			return int64(1+rng.IntN(8)) * unit, int64(1+rng.IntN(8)) * unit
		}
	}
	layers, draft := 1+rng.IntN(6), []int{0, 0, 1, 2}[rng.IntN(4)]
	di, pi := geometry()
	b.kvItems(transferplan.TargetK, layers, di, pi, unit).kvItems(transferplan.TargetV, layers, di, pi, unit)
	if draft > 0 {
		di, pi = geometry()
		b.kvItems(transferplan.DraftK, draft, di, pi, unit).kvItems(transferplan.DraftV, draft, di, pi, unit)
	}
	if n := []int{0, 0, 1, 3}[rng.IntN(4)]; n > 0 {
		di, pi = geometry()
		b.state(n, di, pi, unit)
	}
	if rng.IntN(8) == 0 {
		b.tokensPerPage(16)
	}
	return b.build()
}

// TestPlanProperties plans thousands of random layouts and checks what must
// hold for every compatible one — including, byte by byte, that executing
// the plans as the reference prefill does fills every decode byte with the
// prefill byte of the same token and head — and that incompatible ones fail
// with a reason.
func TestPlanProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 12))
	compatible, kinds := 0, map[transferplan.PlanKind]int{}
	for i := range 5000 {
		l := randomLayout(rng)
		set, err := Plan(l)
		if err != nil {
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason == "" || le.Message == "" {
				t.Fatalf("layout %d: error without reason: %v", i, err)
			}
			continue
		}
		compatible++
		kinds[set.Plans[0].PlanKind]++
		if err := checkPlanSet(l, set.Plans); err != nil {
			t.Fatalf("layout %d (%+v): %v", i, l, err)
		}
		if err := simulateBytes(rng, l, set.Plans, 4); err != nil {
			t.Fatalf("layout %d (%+v): %v", i, l, err)
		}
	}
	t.Logf("%d of 5000 random layouts compatible: %v", compatible, kinds)
	if compatible < 1000 || kinds[transferplan.PlanFragmented] < 300 || kinds[transferplan.PlanMLA] < 200 || kinds[transferplan.PlanIdentity] < 20 {
		t.Fatalf("the generator covers too little: %d compatible, %v", compatible, kinds)
	}
}

// checkPlanSet verifies the invariants of a compatible layout's plans.
func checkPlanSet(l Layout, plans []transferplan.RoutePlan) error {
	P := l.Prefill.TPPerDP()
	fanOut := make([]int, P)
	for _, p := range plans {
		for _, tg := range p.Targets {
			if tg.PrefillTPRank < 0 || tg.PrefillTPRank >= P {
				return fmt.Errorf("decode rank %d names prefill rank %d of %d", p.DecodeTPRank, tg.PrefillTPRank, P)
			}
			fanOut[tg.PrefillTPRank]++
		}
	}
	for _, p := range plans {
		if err := checkRankPlan(l, p, fanOut); err != nil {
			return fmt.Errorf("decode rank %d: %w", p.DecodeTPRank, err)
		}
	}
	idle := map[int]bool{}
	for _, r := range plans[0].IdlePrefillTPRanks {
		idle[r] = true
	}
	for r := range P {
		if idle[r] != (fanOut[r] == 0) {
			return fmt.Errorf("prefill rank %d: fan-out %d but idle=%v", r, fanOut[r], idle[r])
		}
	}
	if l.Attention == transferplan.MLA && len(idle) > 0 {
		return fmt.Errorf("MLA plans leave prefill ranks %v idle", plans[0].IdlePrefillTPRanks)
	}
	return nil
}

func checkRankPlan(l Layout, p transferplan.RoutePlan, fanOut []int) error {
	if p.DecodeTPRank != 0 && len(p.IdlePrefillTPRanks) > 0 {
		return fmt.Errorf("only decode rank 0 lists idle ranks, got %v", p.IdlePrefillTPRanks)
	}
	real := 0
	for i, tg := range p.Targets {
		if p.TargetTPRanks[i] != tg.PrefillTPRank || (i > 0 && tg.PrefillTPRank <= p.Targets[i-1].PrefillTPRank) {
			return fmt.Errorf("targets %v not ascending or not matching targetTPRanks", p.TargetTPRanks)
		}
		if tg.RequiredDstInfoNum != fanOut[tg.PrefillTPRank] {
			return fmt.Errorf("prefill rank %d: dst-info %d, but %d decode ranks target it", tg.PrefillTPRank, tg.RequiredDstInfoNum, fanOut[tg.PrefillTPRank])
		}
		if tg.IsDummy && len(tg.Fragments) > 0 {
			return fmt.Errorf("dummy target %d carries fragments", tg.PrefillTPRank)
		}
		if !tg.IsDummy {
			real++
		}
		for i, f := range tg.Fragments {
			if i > 0 && contiguous(tg.Fragments[i-1], f) {
				return fmt.Errorf("fragments %+v and %+v are contiguous on both sides: one fragment would do", tg.Fragments[i-1], f)
			}
			if f.SrcRank != tg.PrefillTPRank || f.DstRank != p.DecodeTPRank {
				return fmt.Errorf("fragment %+v names the wrong ranks", f)
			}
			if f.BytesPerPage <= 0 || f.SrcByteOffset < 0 || f.DstByteOffset < 0 ||
				f.SrcByteOffset+f.BytesPerPage > f.SrcPageStrideBytes || f.DstByteOffset+f.BytesPerPage > f.DstPageStrideBytes {
				return fmt.Errorf("fragment %+v leaves its item", f)
			}
		}
	}
	if want := wantResponses(l, real); p.RequiredPrefillResponseNum != want {
		return fmt.Errorf("requires %d responses, want %d", p.RequiredPrefillResponseNum, want)
	}
	if p.PlanKind == transferplan.PlanIdentity {
		// Whole items move from the same-numbered rank: both sides shard alike.
		if len(p.Targets) != 1 || p.Targets[0].PrefillTPRank != p.DecodeTPRank || l.Prefill.TPPerDP() != l.Decode.TPPerDP() {
			return fmt.Errorf("identity plan with targets %v", p.TargetTPRanks)
		}
	}
	// Which bytes land where is simulateBytes' job.
	return nil
}

// contiguous reports whether b continues a on both sides within the same
// buffer: the two could have been one fragment.
func contiguous(a, b transferplan.TransferFragment) bool {
	return a.BufferKind == b.BufferKind && a.BufferIndex == b.BufferIndex &&
		b.SrcByteOffset == a.SrcByteOffset+a.BytesPerPage && b.DstByteOffset == a.DstByteOffset+a.BytesPerPage
}

func wantResponses(l Layout, realTargets int) int {
	if l.Attention == transferplan.MLA && !l.MLAL15Cache {
		return 1
	}
	return realTargets
}
