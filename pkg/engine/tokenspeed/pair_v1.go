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
	"fmt"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// A layoutPair is judged on the v1 wire, from the geometry its spec gives
// or derives.
var _ engine.Pair = (*layoutPair)(nil)

func (p *layoutPair) Derived() *pdv1.DerivedBuffers { return p.derived }

func (p *layoutPair) Explicit() pdv1.PDPairSpec { return p.explicit }

// Size sizes the layout's plans; a refusal of a model-aware pair names the
// TP sizes the engine can run the model with at which it plans.
func (p *layoutPair) Size(budget transferplan.Budget) (transferplan.PlanSize, error) {
	size, err := planv1.CheckBudget(p.layout, budget)
	return size, p.explain(err)
}

func (p *layoutPair) Map() (engine.RankMap, error) {
	planner, err := planv1.NewPlanner(p.layout)
	if err != nil {
		return nil, p.explain(err)
	}
	return &planned{planner: planner, setRecord: p.layout.Record()}, nil
}

func (p *layoutPair) DescribeCompatible(s transferplan.Summary) string {
	l := p.layout
	var b strings.Builder
	fmt.Fprintf(&b, "prefill TP %d (DP %d) → decode TP %d (DP %d): %s plans; each decode rank contacts %s prefill ranks; a prefill rank serves up to %d decode ranks; %d fragments",
		l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, s.Kind, span(s.MinTargets, s.MaxTargets), s.MaxPrefillFanOut, s.Fragments)
	if s.FragmentsPerPage > 1 {
		fmt.Fprintf(&b, "; %s", s.PageCost)
	}
	if n := len(s.IdlePrefillRanks); n > 0 {
		fmt.Fprintf(&b, "; %d prefill ranks are pulled from by no decode rank (%v): decode TP rank 0 sends them dummy requests so their rooms complete", n, s.IdlePrefillRanks)
	}
	return b.String()
}

func (p *layoutPair) DescribeOverBudget(s transferplan.PlanSize) string {
	l := p.layout
	return fmt.Sprintf("prefill TP %d (DP %d) → decode TP %d (DP %d): %s plans; %d fragments (sized, not planned: the plans are over the plan budget)",
		l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, s.Kind, s.Fragments)
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

var _ engine.CrossComposer = Engine{}

// ComposeCross plans a kvBuffers pair's cross-generation pair from the
// layouts of two of its published sets (planv1.ComposeCross).
func (Engine) ComposeCross(prefillSide, decodeSide transferplan.LayoutRecord) (engine.Pair, error) {
	l, err := planv1.ComposeCross(prefillSide, decodeSide)
	if err != nil {
		return nil, err
	}
	return &layoutPair{layout: l}, nil
}
