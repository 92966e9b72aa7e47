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
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// measured is what planning a layout really gives, counted from the plans
// and their JSON, independently of the estimator.
type measured struct {
	fragments, maxRankFragments int64
	targets, maxRankTargets     int64
	bytes, maxRankBytes         int64
}

func measure(t *testing.T, plans []transferplan.RoutePlan) measured {
	t.Helper()
	var m measured
	for i := range plans {
		raw, err := json.Marshal(&plans[i])
		if err != nil {
			t.Fatal(err)
		}
		n := int64(plans[i].FragmentCount())
		m.fragments += n
		m.maxRankFragments = max(m.maxRankFragments, n)
		m.targets += int64(len(plans[i].Targets))
		m.maxRankTargets = max(m.maxRankTargets, int64(len(plans[i].Targets)))
		m.bytes += int64(len(raw))
		m.maxRankBytes = max(m.maxRankBytes, int64(len(raw)))
	}
	return m
}

// TestEstimateMatchesPlans sizes thousands of random layouts arithmetically
// and plans them: the fragment count must be exact, the other figures upper
// bounds, and the byte bound tight enough to budget with (within 35% once
// fragments dominate the plans).
func TestEstimateMatchesPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2026))
	checked, kinds, large, loosest := 0, map[transferplan.PlanKind]int{}, 0, 0.0
	for i := range 4000 {
		l := randomLayout(rng)
		if i%3 == 1 { // pages of 1 to 64 tokens: token-row fragments
			l = randomPagedLayout(rng)
		}
		if i%4 == 0 { // many layers, so that fragments dominate the plans
			l.KVBuffers = slices.Repeat(l.KVBuffers, 40)
		}
		set, planErr := Plan(l)
		size, err := EstimatePlanSize(l)
		if (planErr == nil) != (err == nil) {
			t.Fatalf("layout %d: planning says %v, the estimate %v", i, planErr, err)
		}
		if err != nil {
			var pe, ee *transferplan.LayoutError
			if !errors.As(planErr, &pe) || !errors.As(err, &ee) || pe.Reason != ee.Reason {
				t.Fatalf("layout %d: planning fails with %v, the estimate with %v", i, planErr, err)
			}
			continue
		}
		checked++
		kinds[size.Kind]++
		m := measure(t, set.Plans)
		if size.Kind != set.Plans[0].PlanKind || size.DecodeTPRanks != len(set.Plans) {
			t.Fatalf("layout %d: estimated %s with %d ranks, planned %s with %d", i, size.Kind, size.DecodeTPRanks, set.Plans[0].PlanKind, len(set.Plans))
		}
		if size.Fragments != m.fragments {
			t.Fatalf("layout %d (%s): estimated %d fragments, planned %d", i, describe(l), size.Fragments, m.fragments)
		}
		for _, b := range []struct {
			what        string
			bound, real int64
		}{
			{"fragments of one rank", size.MaxRankFragments, m.maxRankFragments},
			{"targets", size.Targets, m.targets},
			{"plan bytes", size.PlanBytes, m.bytes},
			{"plan bytes of one rank", size.MaxRankPlanBytes, m.maxRankBytes},
		} {
			if b.bound < b.real {
				t.Fatalf("layout %d (%s): %s estimated at most %d, planned %d", i, describe(l), b.what, b.bound, b.real)
			}
		}
		if size.Kind != transferplan.PlanFragmented && size.Targets != m.targets {
			t.Fatalf("layout %d: %s plans have %d targets, estimated %d", i, size.Kind, m.targets, size.Targets)
		}
		if m.fragments < 1000 {
			continue
		}
		large++
		loosest = max(loosest, float64(size.PlanBytes)/float64(m.bytes))
		if float64(size.PlanBytes) > 1.25*float64(m.bytes) {
			t.Errorf("layout %d (%s): %d bytes estimated for %d planned: too loose to budget with", i, describe(l), size.PlanBytes, m.bytes)
		}
	}
	t.Logf("%d compatible layouts sized: %v; %d with 1000+ fragments, bytes estimated at most %.2f× the real", checked, kinds, large, loosest)
	if large < 100 || checked < 800 || kinds[transferplan.PlanFragmented] < 300 || kinds[transferplan.PlanMLA] < 100 || kinds[transferplan.PlanIdentity] < 20 {
		t.Fatalf("too few layouts exercised: %d, %v", checked, kinds)
	}
}

// describe names a layout in a failure message without listing every buffer.
func describe(l Layout) string {
	return fmt.Sprintf("%s P%d/dp%d→D%d/dp%d, %d tokens per page, %d KV buffers (first %+v), %d state buffers",
		l.Attention, l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, l.TokensPerPage, len(l.KVBuffers), l.KVBuffers[0], len(l.StateBuffers))
}

// TestEstimateUnevenShards pins the refinement count on layouts where the
// decode and prefill shards cut each other unevenly, counted by hand.
func TestEstimateUnevenShards(t *testing.T) {
	for _, tc := range []struct {
		name               string
		l                  Layout
		fragments, maxRank int64
	}{
		// 6 units: decode [0,3) [3,6); prefill [0,2) [2,4) [4,6). Rank 0 meets
		// prefill 0 and 1, rank 1 meets 1 and 2: 4 fragments per buffer.
		{"P3→D2, 2 buffers", mha(3, 2).kvItems(transferplan.TargetK, 1, 3, 2, 1).kvItems(transferplan.TargetV, 1, 3, 2, 1).build(), 8, 4},
		// 12 units: decode shards of 3, prefill of 4. Decode [0,3) meets 1,
		// [3,6) meets 2, [6,9) meets 2, [9,12) meets 1: 6 per buffer.
		{"P3→D4, 2 buffers", mha(3, 4).kvItems(transferplan.TargetK, 1, 3, 4, 1).kvItems(transferplan.TargetV, 1, 3, 4, 1).build(), 12, 4},
		// 16-token pages, a decode rank holding 2 heads from 2 prefill ranks:
		// each slice is a head range of every token row, 2 sources × 16 rows
		// per buffer and decode rank: 4 ranks × 2 buffers × 32.
		{"P8→D4, 16-token pages", mha(8, 4).tokensPerPage(16).kvItems(transferplan.TargetK, 1, 32, 16, 1).kvItems(transferplan.TargetV, 1, 32, 16, 1).build(), 256, 64},
		// Replicated buffers: one whole item per decode rank.
		{"replicated P4→D8", mha(4, 8).kvItems(transferplan.TargetK, 3, 64, 64, 64).kvItems(transferplan.TargetV, 3, 64, 64, 64).build(), 48, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, err := EstimatePlanSize(tc.l)
			if err != nil {
				t.Fatal(err)
			}
			if size.Fragments != tc.fragments || size.MaxRankFragments != tc.maxRank {
				t.Fatalf("estimated %d fragments (%d for one rank), want %d (%d)", size.Fragments, size.MaxRankFragments, tc.fragments, tc.maxRank)
			}
		})
	}
}

// hostile is the layout: a very wide prefill fleet feeding one decode
// rank over every buffer the CRD allows, so that every buffer of the decode
// rank is cut into one fragment per prefill rank.
func hostile() Layout {
	return mha(4096, 1).kvItems(transferplan.TargetK, 8192, 4096, 1, 1).kvItems(transferplan.TargetV, 8192, 4096, 1, 1).state(16384, 4096, 1, 1).build()
}

func TestBudget(t *testing.T) {
	// 200 layers of K and V, every decode rank taking half of a prefill rank's
	// heads: 1024 ranks × 400 buffers × 1 fragment.
	largest := mha(512, 1024).kvItems(transferplan.TargetK, 200, 256, 512, 256).kvItems(transferplan.TargetV, 200, 256, 512, 256).build()
	size, err := CheckBudget(largest, transferplan.DefaultBudget)
	if err != nil {
		t.Fatalf("the default budget must admit P512→D1024 with 400 buffers: %v", err)
	}
	if size.Fragments != 409_600 {
		t.Fatalf("P512→D1024 × 400 buffers: %d fragments, want 409600", size.Fragments)
	}

	// 32768 buffers × 4096 fragments each, sized without planning.
	size, err = CheckBudget(hostile(), transferplan.DefaultBudget)
	var be *transferplan.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("the hostile layout passes the budget: %v", err)
	}
	if size.Fragments != 134_217_728 || be.Size.Fragments != size.Fragments {
		t.Fatalf("hostile layout: %d fragments, want 134217728", size.Fragments)
	}
	// Its one decode rank holds every fragment: every limit is passed.
	if !slices.Equal(be.Exceeded, []transferplan.BudgetLimit{transferplan.LimitFragments, transferplan.LimitPlanBytes, transferplan.LimitRankPlanBytes}) {
		t.Fatalf("exceeded %v, want every limit", be.Exceeded)
	}

	// MLA with L1.5 has no fragments but every rank targets every prefill rank.
	wide := mla(4096, 4096).l15().kv(transferplan.TargetK, 1, 576, 1).build()
	if _, err := CheckBudget(wide, transferplan.DefaultBudget); !errors.As(err, &be) || !slices.Contains(be.Exceeded, transferplan.LimitPlanBytes) {
		t.Fatalf("MLA L1.5 4096→4096 (16M targets) passes: %v", err)
	}

	// An incompatible layout reports its layout error, not a budget.
	var le *transferplan.LayoutError
	if _, err := CheckBudget(mha(8, 4).kvUnits(transferplan.TargetK, 1, 512, 256, 2, 4).kvUnits(transferplan.TargetV, 1, 512, 256, 2, 4).build(), transferplan.DefaultBudget); !errors.As(err, &le) {
		t.Fatalf("incompatible layout: %v", err)
	}

	// A zero budget admits everything; a raised one admits the hostile layout.
	if _, err := CheckBudget(hostile(), transferplan.Budget{}); err != nil {
		t.Fatalf("Budget{} refuses: %v", err)
	}
}

func BenchmarkEstimateHostile(b *testing.B) {
	l := hostile()
	for b.Loop() {
		if _, err := EstimatePlanSize(l); err != nil {
			b.Fatal(err)
		}
	}
}
