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

package tokenspeed_test

import (
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A v1 pair asked through the interface plans what the planner plans, and
// maps each decode rank of Llama-3-70B's P8→D4 to the two prefill ranks
// holding its heads.
func TestAV1PairThroughTheEngine(t *testing.T) {
	spec := fixtures.Llama70B(8, 4)
	eng := tokenspeed.New()
	if eng.ReadsContracts(spec) || !eng.InjectsAgent() {
		t.Fatalf("a v1 pair: reads contracts %v, agent %v", eng.ReadsContracts(spec), eng.InjectsAgent())
	}
	p, err := eng.Resolve(spec, engine.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Size(transferplan.DefaultBudget); err != nil {
		t.Fatal(err)
	}
	ranks, err := p.Map()
	if err != nil {
		t.Fatal(err)
	}
	if ranks.DecodeRanks() != 4 {
		t.Fatalf("%d decode ranks", ranks.DecodeRanks())
	}
	for d := range 4 {
		if got, _ := ranks.PrefillRanks(d); !slices.Equal(got, []int{2 * d, 2*d + 1}) {
			t.Errorf("decode rank %d pulls from %v, want [%d %d]", d, got, 2*d, 2*d+1)
		}
	}
	layout, err := tokenspeed.FromSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := planv1.Plan(layout)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ranks.Plans().PlanSet()
	if err != nil || got.Hash() != want.Hash() {
		t.Errorf("plan set %s (%v), the planner's %s", got.Hash(), err, want.Hash())
	}
}

// Every contract pair of the vectors tokenspeed's own code wrote, asked
// through the interface: the engine maps each decode rank to the prefill
// ranks the engine's receiver takes data from, and plans what the operator
// publishes.
func TestContractPairsThroughTheEngine(t *testing.T) {
	eng := tokenspeed.New()
	for _, name := range fixtures.ContractPairNames(t) {
		t.Run(name, func(t *testing.T) {
			cp := fixtures.LoadContractPair(t, name)
			spec := pdv1.PDPairSpec{
				Wire:    pdv1.WireCacheContract,
				Prefill: pdv1.FleetLayout{TensorParallelSize: int32(cp.Prefill.TPSize), DataParallelSize: ptr.To(int32(cp.Prefill.DPSize))},
				Decode:  pdv1.FleetLayout{TensorParallelSize: int32(cp.Decode.TPSize)},
				CacheContracts: &pdv1.CacheContracts{
					Prefill: &pdv1.CacheContractSource{Inline: string(cp.PrefillContract)},
					Decode:  &pdv1.CacheContractSource{Inline: string(cp.DecodeContract)},
				},
			}
			if !eng.ReadsContracts(spec) {
				t.Fatal("a CacheContract pair is not judged from its contracts")
			}
			contracts, err := eng.ReadContracts(spec, engine.ReadInline)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range contracts.Roles() {
				if r.SHA256 == "" || r.Holds == "" || len(r.Raw) == 0 {
					t.Errorf("role %d read as %+v", i, r)
				}
			}
			p, err := eng.Resolve(spec, engine.Inputs{Contracts: contracts})
			if err != nil {
				t.Fatal(err)
			}
			ranks, err := p.Map()
			if err != nil {
				t.Fatal(err)
			}
			for d, want := range cp.Targets {
				got, err := ranks.PrefillRanks(d)
				slices.Sort(got)
				want = slices.Sorted(slices.Values(want))
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("decode rank %d pulls from %v (%v), the engine's receiver from %v", d, got, err, want)
				}
			}
			set, err := ranks.Plans().PlanSet()
			if want := cp.Plan(t); err != nil || set.Hash() != want.Hash() {
				t.Errorf("plan set %s (%v), the operator's %s", set.Hash(), err, want.Hash())
			}
		})
	}
}
