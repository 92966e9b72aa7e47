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

package prefillpeer

import (
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"fmt"
	"slices"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxPairPlans bounds the plans a rank keeps (one per decode contract and
// decode TP size it has seen); past it the cache starts over.
const maxPairPlans = 64

// pairPlan is the engine's CacheTransferPlanner for one decode contract and
// TP size, reduced to what a prefill rank asks of it.
type pairPlan struct {
	err error
	// sources[d] are decode rank d's source prefill ranks (the engine's
	// target_prefill_ranks), with how many fragments each sends.
	sources []map[int]int
	// servedBy[p] are the decode ranks prefill rank p serves (the engine's
	// decode_ranks_by_prefill_rank), ascending.
	servedBy [][]int
}

type planKey struct {
	decodeContract string // its SHA-256
	decodeTP       int
}

// planFor plans this rank's contract against a decode contract, as the
// prefill does on every registration (cached).
func (c *contractRank) planFor(decode *plancontract.CacheContract, decodeTP int) *pairPlan {
	key := planKey{decode.SHA256(), decodeTP}
	if pp, ok := c.plans[key]; ok {
		return pp
	}
	if len(c.plans) >= maxPairPlans {
		clear(c.plans)
	}
	pp := &pairPlan{}
	planner, err := plancontract.NewPlanner(plancontract.Pair{
		Prefill:         transferplan.Parallelism{TPSize: c.tpSize, DPSize: 1},
		Decode:          transferplan.Parallelism{TPSize: decodeTP, DPSize: 1},
		PrefillContract: c.prefill, DecodeContract: decode,
	})
	if err != nil {
		pp.err = err
	} else {
		pp.servedBy = make([][]int, c.tpSize)
		for _, plan := range planner.RoutePlans() {
			sources := map[int]int{}
			for _, t := range plan.Targets {
				if !t.IsDummy {
					sources[t.PrefillTPRank] = len(t.ContractFragments)
					pp.servedBy[t.PrefillTPRank] = append(pp.servedBy[t.PrefillTPRank], plan.DecodeTPRank)
				}
			}
			pp.sources = append(pp.sources, sources)
		}
	}
	c.plans[key] = pp
	return pp
}

// prepare is the engine's _prepare_decode_registration for this rank: the
// registration is this rank's target (it serves the decode rank), its dummy
// (decode rank 0 at a prefill rank that serves nobody), or wrong.
func (c *contractRank) prepare(reg kvcontract.Registration) (*contractSession, error) {
	decode, err := plancontract.Parse(reg.Contract)
	if err != nil {
		return nil, fmt.Errorf("the decode contract: %w", err)
	}
	pp := c.planFor(decode, reg.DecodeTPSize)
	if pp.err != nil {
		return nil, fmt.Errorf("the pair does not plan: %w", pp.err)
	}
	s := &contractSession{registration: reg, canonical: string(decode.Canonical()),
		endpoint: statusEndpoint(reg.DecodeIP, reg.DecodeStatusPort)}
	s.layout, s.layoutErr = kvcontract.ManifestLayoutFromContract(reg.Contract)
	served := pp.servedBy[c.tpRank]
	if n, ok := pp.sources[reg.DecodeTPRank][c.tpRank]; ok {
		s.fragments, s.expected = n, served
		return s, nil
	}
	if reg.DecodeTPRank == 0 && len(served) == 0 {
		s.dummy, s.expected = true, []int{0}
		return s, nil
	}
	return nil, fmt.Errorf("decode TP rank %d of %d does not take data from prefill TP rank %d (its sources: %v), and this rank is no idle rank of decode rank 0: the registration targets the wrong prefill TP rank",
		reg.DecodeTPRank, reg.DecodeTPSize, c.tpRank, sortedKeys(pp.sources[reg.DecodeTPRank]))
}

// sameRegistration is the engine's dataclass equality of two prepared
// registrations of one session.
func sameRegistration(a, b *contractSession) bool {
	ra, rb := a.registration, b.registration
	return ra.DecodeIP == rb.DecodeIP && ra.DecodeStatusPort == rb.DecodeStatusPort && ra.ArenaPtr == rb.ArenaPtr &&
		ra.DecodeTPSize == rb.DecodeTPSize && ra.DecodeTPRank == rb.DecodeTPRank && a.canonical == b.canonical &&
		a.dummy == b.dummy && slices.Equal(a.expected, b.expected)
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
