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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
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
	// noPlans: the pair's engine moves the KV cache itself and its
	// agent-less pods load no plans; the verdict and the mapping are all
	// there is.
	noPlans bool
	// rankMap is status.rankMap of a noPlans pair's mapping.
	rankMap *pdv1.RankMapStatus
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
	out, _ := planPairGated(pair, engineFor(pair), modelConfig{}, budget, nil, nil)
	return out
}

// planGate admits the planning of a pair of the given size, blocking while
// too much planning is in flight; release ends the admission.
type planGate func(size transferplan.PlanSize) (release func(), err error)

// planPairGated is planPair with the pair's engine, and the planning and
// encoding (not the sizing) admitted by gate, when there is one.
func planPairGated(pair *pdv1.PDPair, eng engine.Engine, model modelConfig, budget transferplan.Budget, gate planGate, contracts *contractInputs) (*planOutcome, error) {
	out := &planOutcome{uid: pair.UID, generation: pair.Generation, modelVersion: model.version}
	if contracts != nil {
		return planContractPair(pair, eng, out, contracts, budget, gate)
	}
	if model.unavailable != "" {
		out.layoutReason = pdv1.ReasonModelConfigUnavailable
		out.layoutMessage = "model.configMapKeyRef: " + model.unavailable + ". Fix: " + model.fix
		return out, nil
	}
	p, err := eng.Resolve(pair.Spec, engine.Inputs{ModelConfig: model.data})
	if p != nil {
		out.derived = p.Derived()
		if out.derived != nil {
			out.derived.ConfigMapResourceVersion = model.version
		}
	}
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	return planWithinBudget(pair.Name, out, p, budget, gate)
}

// planWithinBudget runs the steps every pair shares, whatever its engine:
// size → budget → gate → map → encode, then the verdict. The size is
// checked against the budget before anything is planned, so that no
// PDPair, however large its plans would be, costs the manager more than
// the budget allows.
func planWithinBudget(name string, out *planOutcome, p engine.Pair, budget transferplan.Budget, gate planGate) (*planOutcome, error) {
	var err error
	out.size, err = p.Size(budget)
	if errors.As(err, &out.overBudget) {
		out.compatible = true
		out.layoutReason, out.layoutMessage = pdv1.ReasonCompatible, p.DescribeOverBudget(out.size)
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
	ranks, err := p.Map()
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	out.compatible = true
	out.decodeRanks = ranks.DecodeRanks()
	plans := ranks.Plans()
	if plans == nil { // the engine's agent loads no plans: nothing to publish
		out.noPlans = true
		out.layoutReason, out.layoutMessage = pdv1.ReasonCompatible, p.DescribeCompatible(out.summary)
		out.rankMap, err = rankMapStatus(ranks)
		return out, err
	}
	summary := transferplan.NewSummarizer(plans.Record())
	out.objects, out.hash, err = encode(name, plans, summary)
	out.summary = summary.Summary()
	out.layoutReason, out.layoutMessage = pdv1.ReasonCompatible, p.DescribeCompatible(out.summary)
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
func encode(name string, plans engine.Plans, summary *transferplan.Summarizer) ([]planstore.Object, string, error) {
	objects, err := plans.Encode(name, summary.Add)
	if err != nil {
		return nil, "", err
	}
	idx, err := planstore.LoadIndex(objects[:1])
	if err != nil {
		return nil, "", err
	}
	return objects, idx.PlanHash, nil
}

// explainLayoutError maps a planner error to a reason by its type, never by
// its text.
func explainLayoutError(err error) (reason pdv1.PDPairConditionReason, message string) {
	var le *transferplan.LayoutError
	switch {
	case errors.As(err, &le) && le.Reason == engine.ReasonContractUnavailable:
		return pdv1.ReasonContractUnavailable, le.Message
	case errors.As(err, &le):
		return layoutReason(le.Reason), le.Message
	}
	return pdv1.ReasonPlanningFailed, err.Error()
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
	// published are the plan sets last published per pair (plansets.go).
	published setMemory
	// cross are the plans of the cross pairs last published (crossplans.go).
	cross crossCache
	// encoded is each pair's last packing of several sets (plansets.go).
	encoded pairMemory[encodedSets]
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
	out, err := planPairGated(pair, engineFor(pair), model, budget, gate, contracts)
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
	c.published.forget(key)
	c.cross.forget(key)
	c.encoded.forget(key)
}
