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

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// PlanSnapshot is one decode rank's route plan with the layout it was made
// for; the layout is what the prefill's live parallel info is checked
// against before a bootstrap address is used.
type PlanSnapshot struct {
	Layout transferplan.LayoutRecord
	Plan   transferplan.RoutePlan
	// Hash identifies the published plan content (for logs and /readyz).
	Hash string
}

// DecodeTPRank is the plan index of an engine rank: its TP rank within its
// decode DP group.
func DecodeTPRank(layout transferplan.LayoutRecord, engineRank int) (int, error) {
	d := layout.Decode
	if err := d.Validate("decode"); err != nil {
		return 0, fmt.Errorf("the plan's layout: %w", err)
	}
	if engineRank < 0 || engineRank >= d.TPSize {
		return 0, fmt.Errorf("engine rank %d is outside the decode fleet of %d ranks the plan was made for", engineRank, d.TPSize)
	}
	return engineRank % d.TPPerDP(), nil
}

// Check reports whether an agent would run snap for engineRank: the plan
// is that rank's, and every target and fragment stays inside the plan's
// layout. Managers check every plan they are given; Check lets a caller
// without one (--print-plan) refuse the same plans.
func (snap PlanSnapshot) Check(engineRank int) error {
	_, err := snap.check(engineRank)
	return err
}

func (snap PlanSnapshot) check(engineRank int) (*routeView, error) {
	rank, err := DecodeTPRank(snap.Layout, engineRank)
	if err != nil {
		return nil, err
	}
	if snap.Plan.DecodeTPRank != rank {
		return nil, fmt.Errorf("the plan is for decode TP rank %d but engine rank %d is decode TP rank %d", snap.Plan.DecodeTPRank, engineRank, rank)
	}
	return newRouteView(snap)
}

// SnapshotFor picks engineRank's plan out of a whole plan set (the output of
// `pdtopo plan -o json`).
func SnapshotFor(set *transferplan.PlanSet, engineRank int) (PlanSnapshot, error) {
	if !set.Compatible {
		return PlanSnapshot{}, fmt.Errorf("the plan set is marked incompatible: prefill and decode layouts cannot exchange KV cache")
	}
	rank, err := DecodeTPRank(set.Layout, engineRank)
	if err != nil {
		return PlanSnapshot{}, err
	}
	for _, p := range set.Plans {
		if p.DecodeTPRank == rank {
			return PlanSnapshot{Layout: set.Layout, Plan: p, Hash: set.Hash()}, nil
		}
	}
	return PlanSnapshot{}, fmt.Errorf("the plan set has no plan for decode TP rank %d (engine rank %d)", rank, engineRank)
}
