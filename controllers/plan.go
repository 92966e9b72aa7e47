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
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/pairlayout"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// planOutcome is what planning a PDPair's spec gave: either the encoded plan
// objects, or why there are none.
type planOutcome struct {
	uid        types.UID
	generation int64
	// modelVersion is the resourceVersion of the model ConfigMap planned from.
	modelVersion string
	// derived is what was derived from spec.model (nil for explicit pairs
	// and when the model could not be derived).
	derived    *pdv1.DerivedBuffers
	compatible bool
	// pending: a contract the spec leaves to the live engines has not been
	// read, so there is no verdict yet (LayoutCompatible=Unknown).
	pending bool
	// layoutReason and layoutMessage explain LayoutCompatible.
	layoutReason  pdv1.PDPairConditionReason
	layoutMessage string

	summary     transferplan.Summary
	decodeRanks int
	hash        string
	// objects are the index and shard objects to publish; nil when the layout
	// is incompatible or the plans could not be encoded.
	objects []planstore.Object
	// encodeErr says why compatible plans could not be encoded.
	encodeErr *planstore.FormatError
	// size is the plans' size computed from the layout before planning.
	size transferplan.PlanSize
	// overBudget is set when size passes the reconciler's budget: the plans
	// were neither computed nor encoded.
	overBudget *transferplan.BudgetError

	// contracts are a contract pair's sources as read when it was planned;
	// contractsFingerprint identifies their bytes.
	contracts            *pdv1.ContractsStatus
	contractsFingerprint string
}

// planPair runs the pure part: spec → layout → size → plans → encoded
// objects. The size is computed arithmetically and checked against the
// budget before anything is planned, so that no PDPair, however large its
// plans would be, costs the manager more than the budget allows.
func planPair(pair *pdv1.PDPair, budget transferplan.Budget) *planOutcome {
	out, _ := planPairGated(pair, modelConfig{}, budget, nil, nil)
	return out
}

// planGate admits the planning of a pair of the given size, blocking while
// too much planning is in flight; release ends the admission.
type planGate func(size transferplan.PlanSize) (release func(), err error)

// planPairGated is planPair with the planning and encoding (not the sizing)
// admitted by gate, when there is one.
func planPairGated(pair *pdv1.PDPair, model modelConfig, budget transferplan.Budget, gate planGate, contracts *contractInputs) (*planOutcome, error) {
	out := &planOutcome{uid: pair.UID, generation: pair.Generation, modelVersion: model.version}
	if contracts != nil {
		return planContractPair(pair, out, contracts, budget, gate)
	}
	if model.unavailable != "" {
		out.layoutReason = pdv1.ReasonModelConfigUnavailable
		out.layoutMessage = "model.configMapKeyRef: " + model.unavailable + ". Fix: " + model.fix
		return out, nil
	}
	res, err := pairlayout.Resolve(pair.Spec, model.data)
	if res != nil {
		out.derived = res.Derived
		if out.derived != nil {
			out.derived.ConfigMapResourceVersion = model.version
		}
	}
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	return planWithinBudget(pair.Name, out, layoutPlanning{res: res}, budget, gate)
}

// pairPlanning is what differs between the wires in planning a pair: how
// its plans are sized, planned and encoded, and how the verdict reads.
// planWithinBudget runs the steps they share.
type pairPlanning interface {
	// size computes the plans' size arithmetically and checks it against
	// the budget (a *transferplan.BudgetError past it).
	size(budget transferplan.Budget) (transferplan.PlanSize, error)
	// planner builds the planner, or refuses the pair (a *LayoutError).
	planner() (pairPlanner, error)
	// describeOverBudget is LayoutCompatible's message for a pair the
	// planner accepts but whose plans were sized and not computed.
	describeOverBudget(size transferplan.PlanSize) string
	// describeCompatible is LayoutCompatible's message for planned plans.
	describeCompatible(summary transferplan.Summary) string
}

// pairPlanner is a built planner of either wire.
type pairPlanner struct {
	decodeRanks int
	record      transferplan.LayoutRecord
	// encode plans and encodes one decode rank at a time, passing each
	// plan to each (the whole plan set is never in memory).
	encode func(name string, each func(*transferplan.RoutePlan)) ([]planstore.Object, error)
}

// planWithinBudget runs the steps every pair shares: size → budget → gate →
// plan → encode, then the verdict. The size is checked against the budget
// before anything is planned, so that no PDPair, however large its plans
// would be, costs the manager more than the budget allows.
func planWithinBudget(name string, out *planOutcome, p pairPlanning, budget transferplan.Budget, gate planGate) (*planOutcome, error) {
	var err error
	out.size, err = p.size(budget)
	if errors.As(err, &out.overBudget) {
		out.compatible = true
		out.layoutReason, out.layoutMessage = pdv1.ReasonCompatible, p.describeOverBudget(out.size)
		return out, nil
	}
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	if gate != nil {
		release, err := gate(out.size)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	planner, err := p.planner()
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	out.compatible = true
	out.decodeRanks = planner.decodeRanks
	summary := transferplan.NewSummarizer(planner.record)
	out.objects, out.hash, err = encode(name, planner, summary)
	out.summary = summary.Summary()
	out.layoutReason, out.layoutMessage = pdv1.ReasonCompatible, p.describeCompatible(out.summary)
	if err != nil {
		out.objects = nil
		if !errors.As(err, &out.encodeErr) {
			out.encodeErr = &planstore.FormatError{Reason: "", Message: err.Error()}
		}
	}
	return out, nil
}

// encode plans and encodes the pair, summarising the plans as they pass,
// and takes the set's hash from the index, where the encoder computed it
// while streaming.
func encode(name string, planner pairPlanner, summary *transferplan.Summarizer) ([]planstore.Object, string, error) {
	objects, err := planner.encode(name, summary.Add)
	if err != nil {
		return nil, "", err
	}
	idx, err := planstore.LoadIndex(objects[:1])
	if err != nil {
		return nil, "", err
	}
	return objects, idx.PlanHash, nil
}

// layoutPlanning plans a pair on the V1 wire from its resolved layout.
type layoutPlanning struct{ res *pairlayout.Resolved }

func (p layoutPlanning) size(budget transferplan.Budget) (transferplan.PlanSize, error) {
	size, err := planv1.CheckBudget(p.res.Layout, budget)
	return size, p.res.Explain(err)
}

func (p layoutPlanning) planner() (pairPlanner, error) {
	planner, err := planv1.NewPlanner(p.res.Layout)
	if err != nil {
		return pairPlanner{}, err
	}
	return pairPlanner{
		decodeRanks: planner.DecodeTPSize(),
		record:      planner.Layout().Record(),
		encode: func(name string, each func(*transferplan.RoutePlan)) ([]planstore.Object, error) {
			return planstore.EncodePlanner(name, planner, each)
		},
	}, nil
}

func (p layoutPlanning) describeCompatible(s transferplan.Summary) string {
	l := p.res.Layout
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

func (p layoutPlanning) describeOverBudget(s transferplan.PlanSize) string {
	l := p.res.Layout
	return fmt.Sprintf("prefill TP %d (DP %d) → decode TP %d (DP %d): %s plans; %d fragments (sized, not planned: the plans are over the plan budget)",
		l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, s.Kind, s.Fragments)
}

// explainLayoutError maps a planner error to a reason by its type, never by
// its text.
func explainLayoutError(err error) (reason pdv1.PDPairConditionReason, message string) {
	var le *transferplan.LayoutError
	switch {
	case errors.As(err, &le) && le.Reason == pairlayout.ReasonContractUnavailable:
		return pdv1.ReasonContractUnavailable, le.Message
	case errors.As(err, &le):
		return layoutReason(le.Reason), le.Message
	}
	return pdv1.ReasonPlanningFailed, err.Error()
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// planCache keeps the last outcome per PDPair so that reconciles caused by
// ConfigMap events (restoring a deleted shard) do not re-plan an unchanged
// spec: a 1024-rank layout costs about a second of CPU to plan and encode.
// The spec cannot change without a new generation; a PDPair deleted and
// re-created under the same name has a new UID.
type planCache struct {
	mu       sync.Mutex
	outcomes map[types.NamespacedName]*planOutcome
	// memory admits planning by its estimated peak memory (planMemory); nil
	// admits everything.
	memory *planMemoryGate
}

func newPlanCache() *planCache { return &planCache{outcomes: map[types.NamespacedName]*planOutcome{}} }

// get returns the outcome for the PDPair's current generation, planning it
// if needed; it fails only when ctx ends while waiting for planning memory.
// A contract pair's contracts may live in ConfigMaps, which change without
// a new generation: its outcome is reused only for the same contract bytes.
func (c *planCache) get(ctx context.Context, pair *pdv1.PDPair, model modelConfig, budget transferplan.Budget, contracts *contractInputs) (*planOutcome, error) {
	key := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	c.mu.Lock()
	cached, ok := c.outcomes[key]
	c.mu.Unlock()
	fingerprint := ""
	if contracts != nil {
		fingerprint = contracts.fingerprint
	}
	if ok && cached.uid == pair.UID && cached.generation == pair.Generation && cached.modelVersion == model.version &&
		cached.contractsFingerprint == fingerprint {
		return cached, nil
	}
	var gate planGate
	if c.memory != nil {
		gate = func(size transferplan.PlanSize) (func(), error) { return c.memory.admit(ctx, size) }
	}
	out, err := planPairGated(pair, model, budget, gate, contracts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.outcomes[key] = out
	c.mu.Unlock()
	return out, nil
}

// forget drops the outcome of a PDPair that no longer exists.
func (c *planCache) forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.outcomes, key)
	c.mu.Unlock()
}
