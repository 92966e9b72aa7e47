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
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Cross pairs: when both roles change in one rollout (P8×D4 → P4×D4 while
// P8 prefills still run → P4×D2), a new D2 decode meets an old P8 prefill,
// a pair no generation was ever made for. Its plans are made here, beside
// the current set's, and published with the generations' sets:
//
//   - a pair with spec.model: the cross pair's spec (LayoutPair.Spec) is
//     resolved and mapped by the engine like any spec, with the same model
//     config, budget and planning memory;
//   - a pair that gives its buffers (kvBuffers): their sizes are known for
//     the current TP sizes only, so the cross layout is composed from the
//     layouts of the sets published for the generations
//     (engine.CrossComposer): the prefill side from the set made for the
//     cross pair's prefill layout, the decode side from the set made for its
//     decode layout; generations that differ in more than their layouts are
//     refused, naming what differs;
//   - a contract pair (cache-contract wire): not planned, as the contracts
//     of older layouts are not read.
//
// A cross pair the engine refuses is never published; RolloutCompatible
// names it. Plans are cached per pair (crossCache), so the reconciles the
// fleet's probes cause do not plan them again.

// crossPlan is one cross pair as the publisher planned it, or did not.
type crossPlan struct {
	pair LayoutPair
	// out is the planning's outcome; nil when the pair is not planned.
	out *planOutcome
	// record is the layout the published plans were made for.
	record transferplan.LayoutRecord
	// notPlanned says why the pair is not planned ("" when it is).
	notPlanned string
	// resolve is the cross pair as its engine sees it, before it is
	// planned: from its spec, or composed from two published sets.
	resolve func() (engine.Pair, error)
}

// published reports whether the cross pair has plans to publish.
func (c crossPlan) published() bool {
	return c.out != nil && c.out.compatible && c.out.objects != nil
}

// refusal is why a planned cross pair has no plans ("" when it has).
func (c crossPlan) refusal() string {
	switch {
	case c.out == nil || c.published():
		return ""
	case c.out.overBudget != nil:
		return "over the plan budget: " + c.out.layoutMessage
	case c.out.encodeErr != nil:
		return c.out.encodeErr.Message
	}
	return fmt.Sprintf("%s: %s", c.out.layoutReason, c.out.layoutMessage)
}

// refused: the engine refuses the pair's layouts (not merely unplanned or
// over a budget).
func (c crossPlan) refused() bool { return c.out != nil && !c.out.compatible }

// servedCrossPairs are the cross pairs of the spec's layout pair with the
// generations status lists (crossPairs) that are no generation's own pair:
// those have their generation's set. They are taken from the spec rather
// than the status's current generation so that the reconcile of the edit
// that makes them plans them (the status it reads is the one before).
func servedCrossPairs(pair *pdv1.PDPair) []LayoutPair {
	gens := pair.Status.Generations
	var out []LayoutPair
	for _, lp := range crossPairs(currentPair(pair), gens) { // each once
		own := slices.ContainsFunc(gens, func(g pdv1.PlanGeneration) bool { return (LayoutPair{g.Prefill, g.Decode}).equal(lp) })
		if !own {
			out = append(out, lp)
		}
	}
	return out
}

// planCrosses plans every served cross pair; sources are the sets
// published for the generations, the current one first, for composing a
// kvBuffers pair's cross layouts. It fails only when ctx ends while
// waiting for planning memory.
func (r *PDPairReconciler) planCrosses(ctx context.Context, pair *pdv1.PDPair, model modelConfig, sources []planstore.SplitSet) ([]crossPlan, error) {
	key := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	used := map[string]crossPlan{}
	var out []crossPlan
	for _, lp := range servedCrossPairs(pair) {
		ck, c := crossPlanFor(pair, lp, model, sources)
		if ck != "" {
			if cached, ok := r.plans.cross.plan(key, pair.UID, ck); ok {
				c = cached
			} else if c.notPlanned == "" {
				var err error
				if c, err = r.planCross(ctx, pair, model.version, c); err != nil {
					return nil, err
				}
			}
			used[ck] = c
		}
		out = append(out, c)
	}
	r.plans.cross.replace(key, pair.UID, used)
	return out, nil
}

// crossPlanFor is the cache key of a cross pair's plans (what they are made
// from) and the plan before planning: how its engine resolves it, or the
// reason it is not planned. An empty key: nothing to cache.
func crossPlanFor(pair *pdv1.PDPair, lp LayoutPair, model modelConfig, sources []planstore.SplitSet) (string, crossPlan) {
	c := crossPlan{pair: lp}
	spec := lp.Spec(pair.Spec)
	raw, _ := json.Marshal(lp) // plain API values: never fails
	eng := engineFor(pair)
	switch {
	case eng.ReadsContracts(spec):
		c.notPlanned = "not planned: the cache contracts of older layouts are not read"
		return "", c
	case spec.Model != nil:
		c.resolve = func() (engine.Pair, error) { return eng.Resolve(spec, engine.Inputs{ModelConfig: model.data}) }
		return fmt.Sprintf("model/%d/%s/%s", pair.Generation, model.version, raw), c
	}
	composer, ok := eng.(engine.CrossComposer)
	if !ok {
		c.notPlanned = fmt.Sprintf("not planned: engine %s does not compose cross layouts from published sets", eng.Name())
		return "", c
	}
	pre, dec := sourceSet(sources, lp, true), sourceSet(sources, lp, false)
	switch {
	case pre == nil:
		c.notPlanned = fmt.Sprintf("not planned: no set is published for prefill layout %s to take its item sizes from", parallelismOf(lp.Prefill))
		return "", c
	case dec == nil:
		c.notPlanned = fmt.Sprintf("not planned: no set is published for decode layout %s to take its item sizes from", parallelismOf(lp.Decode))
		return "", c
	}
	prefillSide, decodeSide := pre.Layout, dec.Layout
	c.resolve = func() (engine.Pair, error) { return composer.ComposeCross(prefillSide, decodeSide) }
	return fmt.Sprintf("composed/%s/%s/%s", raw, pre.PlanHash, dec.PlanHash), c
}

// sourceSet is the first v1 set made for the cross pair's prefill layout
// (prefill) or its decode layout, or nil.
func sourceSet(sources []planstore.SplitSet, lp LayoutPair, prefill bool) *planstore.SplitSet {
	for i, s := range sources {
		if s.Layout.Wire.OrV1() != transferplan.WireV1 {
			continue
		}
		if (prefill && s.Layout.Prefill == parallelismOf(lp.Prefill)) || (!prefill && s.Layout.Decode == parallelismOf(lp.Decode)) {
			return &sources[i]
		}
	}
	return nil
}

// planCross plans one cross pair within the reconciler's budget and
// planning memory, as the spec's pair is planned (planWithinBudget).
func (r *PDPairReconciler) planCross(ctx context.Context, pair *pdv1.PDPair, modelVersion string, c crossPlan) (crossPlan, error) {
	out := &planOutcome{uid: pair.UID, generation: pair.Generation, modelVersion: modelVersion}
	c.out = out
	p, err := c.resolve()
	c.resolve = nil // the cache holds the plans, not what made them (the model config)
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return c, nil
	}
	var gate planGate
	if r.plans.memory != nil {
		gate = func(size transferplan.PlanSize) (func(), error) { return r.plans.memory.admit(ctx, size) }
	}
	if c.out, err = planWithinBudget(pair.Name, out, p, r.Budget, gate); err != nil {
		return c, err
	}
	if c.published() {
		idx, err := planstore.LoadIndex(c.out.objects[:1])
		if err != nil {
			return c, err
		}
		c.record = idx.Layout
	}
	return c, nil
}

// crossCache keeps each pair's cross plans by what they are made from.
// Only the plans of the last reconcile are kept (replace), at most one per
// cross pair the generations make.
type crossCache struct {
	pairMemory[map[string]crossPlan]
}

// plan is the cross plan kept for the pair under k.
func (c *crossCache) plan(key types.NamespacedName, uid types.UID, k string) (crossPlan, bool) {
	plans, _ := c.get(key, uid)
	p, ok := plans[k]
	return p, ok
}

// replace keeps plans as the pair's, and nothing for a pair without any
// (no rollout).
func (c *crossCache) replace(key types.NamespacedName, uid types.UID, plans map[string]crossPlan) {
	if len(plans) == 0 {
		c.forget(key)
		return
	}
	c.put(key, uid, plans)
}
