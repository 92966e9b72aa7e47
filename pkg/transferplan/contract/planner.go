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
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

var _ transferplan.Planner = (*Planner)(nil)

// Pair is a prefill/decode pair on the cache-contract wire: the two
// fleets' parallelism and the contracts their engines publish.
type Pair struct {
	Prefill         transferplan.Parallelism
	Decode          transferplan.Parallelism
	PrefillContract *CacheContract
	DecodeContract  *CacheContract
}

// Planner plans a contract pair the way the engine's
// CacheTransferPlanner does, with everything that does not depend on the
// decode rank (checks, field pairs, prefill fan-out, idle prefill ranks)
// computed once. Where the engine refuses the pair it returns the reason
// instead of a planner.
type Planner struct {
	pair     Pair
	P, D     int // TP ranks per DP group of prefill and decode
	segments []contractSegment
	// fanOut[r] is how many decode ranks pull from prefill rank r.
	fanOut []int
}

// classifyPair runs every check of the engine's planner
// constructor, in its order: TP sizes, the peer check, then each field's
// TP mapping.
func classifyPair(pair Pair) (*Planner, error) {
	if pair.PrefillContract == nil || pair.DecodeContract == nil {
		return nil, transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "cacheContracts", "both the prefill and the decode contract are required")
	}
	if err := pair.Prefill.Validate("prefill"); err != nil {
		return nil, err
	}
	if err := pair.Decode.Validate("decode"); err != nil {
		return nil, err
	}
	p := &Planner{pair: pair, P: pair.Prefill.TPPerDP(), D: pair.Decode.TPPerDP()}
	for _, r := range []struct {
		role string
		f    transferplan.Parallelism
		tp   int
	}{{"prefill", pair.Prefill, p.P}, {"decode", pair.Decode, p.D}} {
		if r.tp > MaxTPSize {
			return nil, transferplan.LayoutErrorf(transferplan.ReasonContractTPOutOfRange, r.role+".tensorParallelSize",
				"%d TP ranks per DP group (tensorParallelSize %d / dataParallelSize %d); the engine plans cache-contract pairs of at most %d",
				r.tp, r.f.TPSize, r.f.DPSize, MaxTPSize).
				WithFix(fmt.Sprintf("at most %d TP ranks per DP group: raise the %s's dataParallelSize to at least %d or lower its tensorParallelSize",
					MaxTPSize, r.role, (r.f.TPSize+MaxTPSize-1)/MaxTPSize))
		}
	}
	if err := CheckPair(pair.PrefillContract, pair.DecodeContract); err != nil {
		return nil, withContractFix(err)
	}
	var err error
	p.segments, err = contractSegments(pair.PrefillContract, pair.DecodeContract, p.checkTPMapping)
	if err != nil {
		return nil, withContractFix(err)
	}
	if p.P != p.D && len(p.segments) == 0 {
		return nil, withContractFix(transferplan.LayoutErrorf(transferplan.ReasonContractNoSourceFragments, "cacheContracts",
			"prefill TP %d and decode TP %d differ and the cache groups hold no fields: no decode rank has source fragments", p.P, p.D))
	}
	return p, nil
}

// NewPlanner checks the pair and computes its rank-independent facts.
func NewPlanner(pair Pair) (*Planner, error) {
	p, err := classifyPair(pair)
	if err != nil {
		return nil, err
	}
	p.fanOut = p.computeFanOut()
	return p, nil
}

// checkTPMapping is _validate_tp_mapping: with equal TP sizes both sides
// hold the same rank-local field; a sharded field's distinct shards divide
// both TP sizes.
func (p *Planner) checkTPMapping(s *contractSegment) error {
	if p.P == p.D && (!equalInts(s.prefillShape, s.decodeShape) || s.prefillPayload() != s.decodePayload()) {
		return transferplan.LayoutErrorf(transferplan.ReasonContractMismatchRankGeometry, "plan.fields "+quote(s.fieldID),
			"field %q: prefill and decode both run TP %d, so their rank-local fields must match: prefill shape %v (%d bytes), decode shape %v (%d bytes)",
			s.fieldID, p.P, s.prefillShape, s.prefillPayload(), s.decodeShape, s.decodePayload())
	}
	if !s.partitioned {
		return nil
	}
	for _, r := range []struct {
		role  string
		shape []int64
		tp    int
	}{{"prefill", s.prefillShape, p.P}, {"decode", s.decodeShape, p.D}} {
		local := r.shape[s.axis]
		distinct := s.globalExtent / local
		if distinct < 1 {
			return transferplan.LayoutErrorf(transferplan.ReasonContractUnsupportedValue, "plan.fields "+quote(s.fieldID),
				"field %q: global extent %d is smaller than the %s local extent %d", s.fieldID, s.globalExtent, r.role, local)
		}
		if distinct > int64(r.tp) || int64(r.tp)%distinct != 0 {
			return transferplan.LayoutErrorf(transferplan.ReasonContractShardsNotDividingTP, "plan.fields "+quote(s.fieldID),
				"field %q: global extent %d over %s local extent %d is %d distinct shards, which must divide %s TP %d",
				s.fieldID, s.globalExtent, r.role, local, distinct, r.role, r.tp).WithFix(shardsFix(s, r.role))
		}
	}
	return nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// DecodeTPSize is the number of decode TP ranks per DP group (plans per pair).
func (p *Planner) DecodeTPSize() int { return p.D }

// Kind is identity when both roles run the same TP size (each prefill rank
// copies its fields whole to the decode rank of the same number), else
// fragmented.
func (p *Planner) Kind() transferplan.PlanKind {
	if p.P == p.D {
		return transferplan.PlanIdentity
	}
	return transferplan.PlanFragmented
}

// Record is the layout record published with the plans.
func (p *Planner) Record() transferplan.LayoutRecord {
	return transferplan.LayoutRecord{
		Wire: transferplan.WireCacheContract, Prefill: p.pair.Prefill, Decode: p.pair.Decode,
		PrefillContractSHA256: p.pair.PrefillContract.SHA256(), DecodeContractSHA256: p.pair.DecodeContract.SHA256(),
	}
}

// IdlePrefillTPRanks are the prefill ranks no decode rank pulls from; decode
// TP rank 0 registers with each as a dummy so that it completes its rooms.
func (p *Planner) IdlePrefillTPRanks() []int {
	idle := []int{}
	for r, n := range p.fanOut {
		if n == 0 {
			idle = append(idle, r)
		}
	}
	return idle
}

// PrefillFanOut is, per prefill TP rank, how many decode ranks pull from it.
func (p *Planner) PrefillFanOut() []int { return append([]int(nil), p.fanOut...) }

// RoutePlan is decode TP rank d's plan: its sources (the engine's
// target_prefill_ranks) with their fragments, and on rank 0 the idle
// prefill ranks as dummy targets.
func (p *Planner) RoutePlan(d int) (transferplan.RoutePlan, error) {
	if d < 0 || d >= p.D {
		return transferplan.RoutePlan{}, transferplan.LayoutErrorf(transferplan.ReasonRankOutOfRange, "",
			"decode TP rank %d does not exist: the decode side has %d TP ranks per DP group", d, p.D)
	}
	plan := transferplan.RoutePlan{DecodeTPRank: d, PlanKind: p.Kind(), SupportsRemoteSpecCandidates: true, IdlePrefillTPRanks: []int{}}
	bySource := map[int][]transferplan.ContractFragment{d: nil}
	if p.P != p.D {
		bySource = p.fragmentsBySource(d)
	} else {
		plan.TargetTPRank = &d
	}
	plan.RequiredPrefillResponseNum = len(bySource)
	if d == 0 {
		plan.IdlePrefillTPRanks = p.IdlePrefillTPRanks()
	}
	idle := map[int]bool{}
	for _, r := range plan.IdlePrefillTPRanks {
		idle[r] = true
	}
	for r := range p.P {
		frags, real := bySource[r]
		if !real && !idle[r] {
			continue
		}
		t := transferplan.PlanTarget{PrefillTPRank: r, IsDummy: !real, RequiredDstInfoNum: 1, Fragments: []transferplan.TransferFragment{}}
		if real {
			t.RequiredDstInfoNum = p.fanOut[r]
			t.ContractFragments = frags
		}
		plan.TargetTPRanks = append(plan.TargetTPRanks, r)
		plan.Targets = append(plan.Targets, t)
	}
	return plan, nil
}

// RoutePlans is every decode TP rank's plan, ascending.
func (p *Planner) RoutePlans() []transferplan.RoutePlan {
	plans := make([]transferplan.RoutePlan, p.D)
	for d := range plans {
		plans[d], _ = p.RoutePlan(d)
	}
	return plans
}

// Plan checks the pair and plans every decode TP rank.
func Plan(pair Pair) (*transferplan.PlanSet, error) {
	p, err := NewPlanner(pair)
	if err != nil {
		return nil, err
	}
	return &transferplan.PlanSet{Compatible: true, Layout: p.Record(), Plans: p.RoutePlans()}, nil
}
