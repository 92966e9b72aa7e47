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

package tokenspeed

import (
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// planned is a compatible pair's rank map: tokenspeed's agent loads the
// route plans, so the map is the plans.
type planned struct {
	// planner is the built planner of either wire.
	planner transferplan.Planner
	// setRecord is the layout the in-memory set carries, as planv1.Plan
	// and plancontract.Plan write it.
	setRecord transferplan.LayoutRecord
}

var (
	_ engine.RankMap = (*planned)(nil)
	_ engine.Plans   = (*planned)(nil)
)

func (p *planned) DecodeRanks() int { return p.planner.DecodeTPSize() }

// PrefillRanks are the prefill TP ranks decode TP rank d's plan targets,
// dummy targets left out.
func (p *planned) PrefillRanks(d int) ([]int, error) {
	plan, err := p.planner.RoutePlan(d)
	if err != nil {
		return nil, err
	}
	ranks := make([]int, 0, len(plan.Targets))
	for _, t := range plan.Targets {
		if !t.IsDummy {
			ranks = append(ranks, t.PrefillTPRank)
		}
	}
	return ranks, nil
}

func (p *planned) Plans() engine.Plans { return p }

func (p *planned) Record() transferplan.LayoutRecord { return p.planner.Record() }

func (p *planned) Encode(name string, each func(*transferplan.RoutePlan)) ([]planstore.Object, error) {
	return planstore.EncodePlanner(name, p.planner, each)
}

func (p *planned) PlanSet() (*transferplan.PlanSet, error) {
	return &transferplan.PlanSet{Compatible: true, Layout: p.setRecord, Plans: p.planner.RoutePlans()}, nil
}
