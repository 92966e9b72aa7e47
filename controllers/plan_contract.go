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

package controllers

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// planContractPair plans a pair on the cache-contract wire: its contracts
// as read (or why they cannot be used), then the steps every pair shares
// (planWithinBudget), under the same budget and planning gate as v1 pairs.
func planContractPair(pair *pdv1.PDPair, out *planOutcome, in *contractInputs, budget transferplan.Budget, gate planGate) (*planOutcome, error) {
	out.contracts, out.contractsFingerprint = in.status(metav1.Now()), in.fingerprint
	if in.pending != "" {
		out.pending = true
		out.layoutReason, out.layoutMessage = pdv1.ReasonContractPending, in.pending
		return out, nil
	}
	if in.refusal != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(in.refusal)
		return out, nil
	}
	return planWithinBudget(pair.Name, out, contractPlanning{in: in}, budget, gate)
}

// contractPlanning plans a contract pair from its two contracts.
type contractPlanning struct{ in *contractInputs }

func (p contractPlanning) size(budget transferplan.Budget) (transferplan.PlanSize, error) {
	return plancontract.CheckBudget(p.in.pair, budget)
}

func (p contractPlanning) planner() (pairPlanner, error) {
	planner, err := plancontract.NewPlanner(p.in.pair)
	if err != nil {
		return pairPlanner{}, err
	}
	return pairPlanner{
		decodeRanks: planner.DecodeTPSize(),
		record:      planner.Record(),
		encode: func(name string, each func(*transferplan.RoutePlan)) ([]planstore.Object, error) {
			return planstore.EncodePlanner(name, planner, each)
		},
	}, nil
}

func (p contractPlanning) describeOverBudget(s transferplan.PlanSize) string {
	return fmt.Sprintf("%s: %s plans; %d fragments (sized, not planned: the plans are over the plan budget)",
		describeContractPair(p.in), s.Kind, s.Fragments)
}

func (p contractPlanning) describeCompatible(s transferplan.Summary) string {
	return describeContractCompatible(p.in, s)
}

// describeContractPair names the TP sizes and the contracts of a pair.
func describeContractPair(in *contractInputs) string {
	p, d := in.pair.Prefill, in.pair.Decode
	return fmt.Sprintf("prefill TP %d (DP %d) → decode TP %d (DP %d) on the CacheContract wire, prefill contract %s… (%s), decode contract %s… (%s)",
		p.TPSize, p.DPSize, d.TPSize, d.DPSize, in.roles[0].Contract.SHA256()[:12], in.roles[0].Source, in.roles[1].Contract.SHA256()[:12], in.roles[1].Source)
}

func describeContractCompatible(in *contractInputs, s transferplan.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s plans; each decode rank contacts %s prefill ranks; a prefill rank serves up to %d decode ranks; %d fragments",
		describeContractPair(in), s.Kind, span(s.MinTargets, s.MaxTargets), s.MaxPrefillFanOut, s.Fragments)
	if n := len(s.IdlePrefillRanks); n > 0 {
		fmt.Fprintf(&b, "; %d prefill ranks are pulled from by no decode rank (%v): decode TP rank 0 registers with them as a dummy so their rooms complete", n, s.IdlePrefillRanks)
	}
	return b.String()
}
