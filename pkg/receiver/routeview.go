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

package receiver

import (
	"fmt"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// routeView is a plan prepared for the hot path: every prefill rank this
// decode rank sends to, with its frames that do not change per room encoded
// once, and a rank → expected-index table for status messages.
type routeView struct {
	snap PlanSnapshot
	// sends are the plan's targets in order, then (decode TP rank 0 only)
	// the idle prefill ranks as dummies.
	sends []sendTarget
	// expectIdx maps a prefill TP rank to its index among the real targets,
	// or to a negative rankRole saying why no status is expected from it.
	expectIdx []int
	// sendAt maps a prefill TP rank to its index in sends (-1: none), so
	// that a status is held to the endpoint its room sent that rank.
	sendAt   []int
	expected int
	required int
	// specOK: the plan lets the engine use prefill's spec candidates.
	specOK bool
	// bounds are what the fragments were held to, and the buffers they use.
	bounds *fragmentBounds
	// wire is the plan's wire (wire.go), with what it prepared of the plan.
	wire wire.Wire
}

// sendTarget is one prefill TP rank and the per-plan frames sent to it.
type sendTarget struct {
	rank    int
	dummy   bool
	idle    bool // an idle prefill rank released by decode TP rank 0
	dstInfo int  // required_dst_info_num
	// fragments is empty for dummies and for targets without fragments
	// (identity, MLA): then no fragment frames are sent.
	fragments kvv1.FragmentFrames
}

// newRouteView checks a snapshot and prepares it. Every check names the
// numbers involved: a broken plan must never reach the wire.
func newRouteView(snap PlanSnapshot) (*routeView, error) {
	p := snap.Layout.Prefill
	if err := p.Validate("prefill"); err != nil {
		return nil, fmt.Errorf("the plan's layout: %w", err)
	}
	P := p.TPPerDP()
	plan := &snap.Plan
	v := &routeView{snap: snap, expectIdx: make([]int, P), required: plan.RequiredPrefillResponseNum, specOK: plan.SupportsRemoteSpecCandidates,
		wire: newWire(snap.Layout.Wire)}
	v.sendAt = make([]int, P)
	for i := range v.expectIdx {
		v.expectIdx[i], v.sendAt[i] = int(roleNotInPlan), -1
	}
	var err error
	if v.bounds, err = newFragmentBounds(&snap); err != nil {
		return nil, err
	}
	seen := make(map[int]bool)
	if err := v.wire.CheckPlan(plan); err != nil {
		return nil, err
	}
	for _, t := range plan.Targets {
		if t.IsDummy && !v.wire.SendsDummyTargets() {
			continue // an idle prefill rank, added below
		}
		if err := v.addTarget(t, P, seen); err != nil {
			return nil, err
		}
	}
	for _, r := range plan.IdlePrefillTPRanks {
		if r < 0 || r >= P || seen[r] {
			return nil, fmt.Errorf("plan for decode TP rank %d lists idle prefill TP rank %d, which is out of range [0,%d) or also a target", plan.DecodeTPRank, r, P)
		}
		seen[r] = true
		v.expectIdx[r], v.sendAt[r] = int(roleIdle), len(v.sends)
		v.sends = append(v.sends, sendTarget{rank: r, dummy: true, idle: true, dstInfo: 1})
	}
	if v.expected == 0 || v.required < 1 || v.required > v.expected {
		return nil, fmt.Errorf("plan for decode TP rank %d needs %d prefill responses but has %d non-dummy targets", plan.DecodeTPRank, v.required, v.expected)
	}
	if err := v.wire.FinishView(v); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *routeView) addTarget(t transferplan.PlanTarget, P int, seen map[int]bool) error {
	if t.PrefillTPRank < 0 || t.PrefillTPRank >= P || seen[t.PrefillTPRank] {
		return fmt.Errorf("plan for decode TP rank %d targets prefill TP rank %d, which is out of range [0,%d) or listed twice", v.snap.Plan.DecodeTPRank, t.PrefillTPRank, P)
	}
	if t.RequiredDstInfoNum < 1 {
		return fmt.Errorf("plan for decode TP rank %d gives prefill TP rank %d requiredDstInfoNum %d; it must be at least 1", v.snap.Plan.DecodeTPRank, t.PrefillTPRank, t.RequiredDstInfoNum)
	}
	if err := v.bounds.check(&t); err != nil {
		return err
	}
	seen[t.PrefillTPRank] = true
	v.sendAt[t.PrefillTPRank] = len(v.sends)
	s := sendTarget{rank: t.PrefillTPRank, dummy: t.IsDummy, dstInfo: t.RequiredDstInfoNum}
	if t.IsDummy {
		v.expectIdx[t.PrefillTPRank] = int(roleDummy)
	} else {
		v.expectIdx[t.PrefillTPRank] = v.expected
		v.expected++
		s.fragments = kvv1.EncodeFragmentFrames(t.Fragments)
	}
	v.sends = append(v.sends, s)
	return nil
}

// rankRole says why a prefill TP rank's status messages are not expected;
// each role is counted under its own rejection reason, so that a sender
// that should stay silent (a dummy, an idle rank) is told apart from one
// the plan does not know.
type rankRole int

const (
	roleNotInPlan  rankRole = -1 // a TP rank of the prefill DP group this plan neither targets nor releases
	roleDummy      rankRole = -2 // a dummy target: it gets empty messages and owes no status
	roleIdle       rankRole = -3 // an idle prefill rank released by decode TP rank 0
	roleOutOfRange rankRole = -4 // not a TP rank of any prefill DP group of this layout
)

// rejectReasons maps each role to its rejection reason.
var rejectReasons = map[rankRole]string{
	roleNotInPlan:  RejectUnexpectedRank,
	roleDummy:      RejectDummyTarget,
	roleIdle:       RejectIdlePrefillRank,
	roleOutOfRange: RejectRankOutOfRange,
}

// expectedIndex is the index of prefill TP rank r among the real targets,
// or a negative rankRole when r is not one.
func (v *routeView) expectedIndex(r int) int {
	if r < 0 || r >= len(v.expectIdx) {
		return int(roleOutOfRange)
	}
	return v.expectIdx[r]
}
