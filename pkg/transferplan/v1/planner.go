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

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

var _ transferplan.Planner = (*Planner)(nil)

// Planner holds everything about a layout that does not depend on the decode
// rank — buffer classification, plan kind, prefill fan-out — computed once, so
// that each rank's plan costs only the fragments it contains.
type Planner struct {
	layout    Layout
	prefillTP int // P: prefill TP ranks per DP group
	decodeTP  int // D: decode TP ranks per DP group
	kind      transferplan.PlanKind
	// pairs are the buffers in walk order (KV layer by layer, then state);
	// empty for MLA plans, which move whole items.
	pairs []bufferPair
	// fanOut[r] is how many decode TP ranks send prefill TP rank r a request.
	fanOut []int
}

// NewPlanner validates the layout and computes its rank-independent facts. It
// returns a *LayoutError when the two sides cannot exchange KV cache.
func NewPlanner(l Layout) (*Planner, error) {
	p, err := classify(l)
	if err != nil {
		return nil, err
	}
	if p.kind == transferplan.PlanMLA {
		p.fanOut = p.mlaFanOut()
	} else {
		p.fanOut = p.shardedFanOut()
	}
	return p, nil
}

// classifyLayout validates the layout and decides the plan kind and every
// buffer's logical layout: all of NewPlanner but the fan-out, whose cost
// grows with the fragment count. EstimatePlanSize stops here (through
// classify, which adds the fix of a refusal), so that sizing a layout never
// costs what planning it would.
func classifyLayout(l Layout) (*Planner, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	p := &Planner{layout: l, prefillTP: l.Prefill.TPPerDP(), decodeTP: l.Decode.TPPerDP()}
	if l.Attention == transferplan.MLA {
		p.kind = transferplan.PlanMLA
		if err := checkMLAItems(l); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.classifyBuffers(); err != nil {
		return nil, err
	}
	p.kind = transferplan.PlanFragmented
	if p.prefillTP == p.decodeTP && p.noReplicaGroups() {
		p.kind = transferplan.PlanIdentity
	}
	if err := p.assignRows(); err != nil {
		return nil, err
	}
	if err := p.checkStateSources(); err != nil {
		return nil, err
	}
	return p, nil
}

// Kind is the plan kind every decode rank of this layout gets.
func (p *Planner) Kind() transferplan.PlanKind { return p.kind }

// DecodeTPSize is the number of decode TP ranks per DP group (plans per layout).
func (p *Planner) DecodeTPSize() int { return p.decodeTP }

// Layout is the layout the planner was built for.
func (p *Planner) Layout() Layout { return p.layout }

// Record is the layout record published with the plans.
func (p *Planner) Record() transferplan.LayoutRecord { return p.layout.Record() }

// PrefillFanOut is, per prefill TP rank, how many decode ranks send it a
// request.
func (p *Planner) PrefillFanOut() []int { return append([]int(nil), p.fanOut...) }

// IdlePrefillTPRanks are the prefill TP ranks no decode rank targets.
func (p *Planner) IdlePrefillTPRanks() []int {
	idle := []int{}
	for r, n := range p.fanOut {
		if n == 0 {
			idle = append(idle, r)
		}
	}
	return idle
}

// classifyBuffers builds the logical layout of every buffer in walk order and
// runs the reference planner's alignment checks (prefill side, then decode).
func (p *Planner) classifyBuffers() error {
	l := p.layout
	for _, i := range kvWalkOrder(l.KVBuffers) {
		pair, err := buildBufferPair(i, l.KVBuffers[i], p.prefillTP, p.decodeTP)
		if err != nil {
			return err
		}
		p.pairs = append(p.pairs, pair)
	}
	for i, b := range l.StateBuffers {
		pair, err := buildBufferPair(i, b, p.prefillTP, p.decodeTP)
		if err != nil {
			return err
		}
		p.pairs = append(p.pairs, pair)
	}
	for _, bp := range p.pairs {
		if err := checkAlignment(bp.spec, bp.prefill, p.prefillTP, "prefill"); err != nil {
			return err
		}
	}
	for _, bp := range p.pairs {
		if err := checkAlignment(bp.spec, bp.decode, p.decodeTP, "decode"); err != nil {
			return err
		}
	}
	return nil
}

func (p *Planner) noReplicaGroups() bool {
	for _, bp := range p.pairs {
		if bp.prefill.ReplicaGroup != 1 || bp.decode.ReplicaGroup != 1 {
			return false
		}
	}
	return true
}

// RoutePlan computes the plan of one decode TP rank.
func (p *Planner) RoutePlan(decodeTPRank int) (transferplan.RoutePlan, error) {
	if decodeTPRank < 0 || decodeTPRank >= p.decodeTP {
		return transferplan.RoutePlan{}, transferplan.LayoutErrorf(transferplan.ReasonRankOutOfRange, "",
			"decode TP rank %d does not exist: the decode side has %d TP ranks per DP group", decodeTPRank, p.decodeTP).
			WithFix(fmt.Sprintf("ask for decode TP ranks 0 to %d (engine rank %% %d)", p.decodeTP-1, p.decodeTP))
	}
	var plan transferplan.RoutePlan
	switch p.kind {
	case transferplan.PlanMLA:
		plan = p.mlaPlan(decodeTPRank)
	case transferplan.PlanIdentity:
		plan = p.identityPlan(decodeTPRank)
	default:
		plan = p.fragmentedPlan(decodeTPRank)
	}
	plan.IdlePrefillTPRanks = []int{}
	if decodeTPRank == 0 {
		plan.IdlePrefillTPRanks = p.IdlePrefillTPRanks()
	}
	return plan, nil
}

// RoutePlans computes the plans of every decode TP rank, ascending.
func (p *Planner) RoutePlans() []transferplan.RoutePlan {
	plans := make([]transferplan.RoutePlan, p.decodeTP)
	for d := range plans {
		plans[d], _ = p.RoutePlan(d) // every d in range is valid
	}
	return plans
}

func (p *Planner) identityPlan(d int) transferplan.RoutePlan {
	return transferplan.RoutePlan{
		DecodeTPRank:                 d,
		PlanKind:                     transferplan.PlanIdentity,
		TargetTPRank:                 &d,
		TargetTPRanks:                []int{d},
		RequiredPrefillResponseNum:   1,
		SupportsRemoteSpecCandidates: true,
		Targets: []transferplan.PlanTarget{{
			PrefillTPRank:      d,
			RequiredDstInfoNum: p.fanOut[d],
			Fragments:          []transferplan.TransferFragment{},
		}},
	}
}

func (p *Planner) fragmentedPlan(d int) transferplan.RoutePlan {
	byRank := p.fragmentsBySource(d)
	plan := transferplan.RoutePlan{
		DecodeTPRank:  d,
		PlanKind:      transferplan.PlanFragmented,
		TargetTPRanks: make([]int, 0, len(byRank)),
		Targets:       make([]transferplan.PlanTarget, 0, len(byRank)),
	}
	for _, frags := range byRank {
		r := frags[0].SrcRank
		plan.TargetTPRanks = append(plan.TargetTPRanks, r)
		plan.Targets = append(plan.Targets, transferplan.PlanTarget{PrefillTPRank: r, RequiredDstInfoNum: p.fanOut[r], Fragments: frags})
	}
	plan.RequiredPrefillResponseNum = len(plan.Targets)
	return plan
}
