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

package contract

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Invariants every contract plan set must hold, checked on the engine's
// vectors and on random pairs generated here:
//   - every byte of every decode field page is written exactly once, by
//     fragments that stay inside the prefill's and the decode's field page;
//   - every rank named exists; dummies appear only in decode rank 0's plan
//     and are exactly the prefill ranks no decode rank pulls from;
//   - a source's fan-out is the number of decode ranks that name it;
//   - the size computed before planning is the size of the plans.
func checkContractInvariants(t *testing.T, pair Pair, set *transferplan.PlanSet) {
	t.Helper()
	p, err := NewPlanner(pair)
	if err != nil {
		t.Fatal(err)
	}
	named := map[int]int{}
	idle := p.IdlePrefillTPRanks()
	for d, plan := range set.Plans {
		if plan.DecodeTPRank != d {
			t.Fatalf("plan %d is for decode rank %d", d, plan.DecodeTPRank)
		}
		var dummies []int
		for _, tg := range plan.Targets {
			if tg.PrefillTPRank < 0 || tg.PrefillTPRank >= p.P {
				t.Errorf("decode rank %d names prefill rank %d of %d", d, tg.PrefillTPRank, p.P)
			}
			if tg.IsDummy {
				dummies = append(dummies, tg.PrefillTPRank)
			} else {
				named[tg.PrefillTPRank]++
			}
		}
		if d != 0 {
			if len(dummies) > 0 {
				t.Errorf("decode rank %d has dummy targets %v; only rank 0 meets idle prefill ranks", d, dummies)
			}
		} else if !slices.Equal(orEmptyInts(dummies), orEmptyInts(idle)) {
			t.Errorf("decode rank 0 dummies %v, idle prefill ranks %v", dummies, idle)
		}
		if p.P != p.D {
			checkCoverage(t, p, d, plan)
		}
	}
	for r := range p.P {
		if named[r] != p.fanOut[r] {
			t.Errorf("prefill rank %d: named by %d decode ranks, fan-out %d", r, named[r], p.fanOut[r])
		}
		if (named[r] == 0) != slices.Contains(idle, r) {
			t.Errorf("prefill rank %d: named by %d decode ranks, idle %v", r, named[r], idle)
		}
	}
	checkEstimate(t, pair, set)
}

// checkCoverage checks that decode rank d's fragments write each byte of
// each of its field pages once, reading inside the prefill's field page.
func checkCoverage(t *testing.T, p *Planner, d int, plan transferplan.RoutePlan) {
	t.Helper()
	written := map[string][][2]int64{}
	for _, tg := range plan.Targets {
		for _, f := range tg.ContractFragments {
			for row := range f.RowsPerPage {
				lo := f.DstByteOffset + row*f.DstRowStrideBytes
				written[f.GroupID+"/"+f.FieldID] = append(written[f.GroupID+"/"+f.FieldID], [2]int64{lo, lo + f.BytesPerRow})
				if src := f.SrcByteOffset + row*f.SrcRowStrideBytes + f.BytesPerRow; src > prefillPayloadOf(p, f) {
					t.Errorf("decode rank %d: fragment %+v reads to byte %d of a %d-byte prefill page", d, f, src, prefillPayloadOf(p, f))
				}
			}
		}
	}
	for i := range p.segments {
		s := &p.segments[i]
		ranges := written[s.groupID+"/"+s.fieldID]
		sort.Slice(ranges, func(a, b int) bool { return ranges[a][0] < ranges[b][0] })
		at := int64(0)
		for _, r := range ranges {
			if r[0] != at {
				t.Fatalf("decode rank %d field %s: bytes from %d are written at %d (gap or overlap); ranges %v", d, s.fieldID, at, r[0], ranges)
			}
			at = r[1]
		}
		if at != s.decodePayload() {
			t.Fatalf("decode rank %d field %s: %d of %d bytes written", d, s.fieldID, at, s.decodePayload())
		}
	}
}

func prefillPayloadOf(p *Planner, f transferplan.ContractFragment) int64 {
	for i := range p.segments {
		if s := &p.segments[i]; s.groupID == f.GroupID && s.fieldID == f.FieldID {
			return s.prefillPayload()
		}
	}
	return -1
}

// checkEstimate holds the arithmetic size to the plans: fragments exactly,
// everything else as a bound.
func checkEstimate(t *testing.T, pair Pair, set *transferplan.PlanSet) {
	t.Helper()
	size, err := EstimatePlanSize(pair)
	if err != nil {
		t.Fatal(err)
	}
	var frags, targets, planBytes, mostRankFrags, mostRankBytes int64
	for _, plan := range set.Plans {
		b, _ := json.Marshal(plan)
		n := int64(plan.FragmentCount() + countContract(plan))
		frags += n
		targets += int64(len(plan.Targets))
		planBytes += int64(len(b))
		mostRankFrags, mostRankBytes = max(mostRankFrags, n), max(mostRankBytes, int64(len(b)))
	}
	if size.Fragments != frags || size.MaxRankFragments < mostRankFrags || size.Targets+int64(len(set.Plans[0].IdlePrefillTPRanks)) < targets ||
		size.PlanBytes < planBytes || size.MaxRankPlanBytes < mostRankBytes {
		t.Errorf("estimate %+v; the plans hold %d fragments (up to %d per rank), %d targets, %d bytes (up to %d per rank)",
			size, frags, mostRankFrags, targets, planBytes, mostRankBytes)
	}
}

func countContract(p transferplan.RoutePlan) int {
	n := 0
	for _, tg := range p.Targets {
		n += len(tg.ContractFragments)
	}
	return n
}

func TestContractPlanInvariantsOnEngineVectors(t *testing.T) {
	var random []pairVector
	readGzipJSON(t, "../testdata/contract/random-pairs.json.gz", &random)
	for _, v := range append(goldenPairVectors(t), random...) {
		if !v.Engine.Accepted {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			pre, _ := Parse([]byte(v.PrefillContract))
			dec, _ := Parse([]byte(v.DecodeContract))
			pair := Pair{Prefill: v.Prefill, Decode: v.Decode, PrefillContract: pre, DecodeContract: dec}
			set, err := Plan(pair)
			if err != nil {
				t.Fatal(err)
			}
			checkContractInvariants(t, pair, set)
		})
	}
}

// Random GQA, MLA and hybrid models over random TP sizes: whatever the
// planner accepts holds the invariants.
func TestContractPlanInvariantsOnRandomModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	planned := 0
	for i := range 400 {
		c := testContract{prefix: 16}
		heads := []int{1, 2, 3, 4, 6, 8, 12, 16}[rng.IntN(8)]
		switch rng.IntN(3) {
		case 0:
			c.groups = []testGroup{mhaGroup(1+rng.IntN(3), heads, []int{1, 4, 16}[rng.IntN(3)])}
		case 1:
			c.groups = []testGroup{mlaGroup(1+rng.IntN(3), 16)}
		default:
			c.groups = []testGroup{mhaGroup(1, heads, 16), stateGroup("linear_attention_0", 4*(1+rng.IntN(4)), 8*(1+rng.IntN(4)))}
		}
		P, D := 1+rng.IntN(12), 1+rng.IntN(12)
		name := fmt.Sprintf("%d-%s-heads%d-p%d-d%d", i, c.groups[len(c.groups)-1].id, heads, P, D)
		t.Run(name, func(t *testing.T) {
			pre, err1 := Parse([]byte(c.json(P)))
			dec, err2 := Parse([]byte(c.json(D)))
			if err1 != nil || err2 != nil {
				return // the engine would not build these contracts either (e.g. 16 heads over 5 ranks)
			}
			pair := Pair{Prefill: transferplan.Parallelism{TPSize: P, DPSize: 1}, Decode: transferplan.Parallelism{TPSize: D, DPSize: 1}, PrefillContract: pre, DecodeContract: dec}
			set, err := Plan(pair)
			if err != nil {
				return // refusals are the vectors' business
			}
			planned++
			checkContractInvariants(t, pair, set)
		})
	}
	if planned < 100 {
		t.Errorf("only %d of 400 random pairs planned", planned)
	}
}
