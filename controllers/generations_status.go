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
	"time"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// generationsObservation is status.generations and RolloutCompatible as
// one reconcile found them.
type generationsObservation struct {
	list    []pdv1.PlanGeneration
	verdict rolloutVerdict
	// recheck is how soon the first older generation's grace ends (0:
	// none is in its grace): nothing else may reconcile the pair then.
	recheck time.Duration
}

// observeGenerations updates the generations served from what planning,
// publishing and the fleet observation (nil when the pods could not be
// listed) found, and judges their cross pairs.
func (r *PDPairReconciler) observeGenerations(pair *pdv1.PDPair, out *planOutcome, pub publication, fleet *fleetObservation, model modelConfig) generationsObservation {
	in := generationsInput{
		servable:   out.compatible && !out.pending,
		planHash:   currentPlanHash(out, pub),
		now:        r.now(),
		generation: pair.Generation,
	}
	if !in.servable {
		in.refusal = fmt.Sprintf("%s: %s", out.layoutReason, truncate(out.layoutMessage, 300))
	}
	if fleet != nil {
		in.usage = &fleet.usage
	}
	gens := nextGenerations(pair, in)
	obs := generationsObservation{list: gens, verdict: r.rollouts.judge(pair, gens, model, pub.crosses)}
	for _, g := range gens {
		if left := g.LastUsed.Add(GenerationGrace).Sub(in.now); !g.Current && left > 0 {
			obs.recheck = minPositive(obs.recheck, left+time.Second)
		}
	}
	return obs
}

// setGenerations writes status.generations and RolloutCompatible.
func setGenerations(pair *pdv1.PDPair, obs generationsObservation) {
	pair.Status.Generations = obs.list
	v := obs.verdict
	setCondition(pair, pdv1.PDPairRolloutCompatible, v.compatible, v.reason, v.message)
}

// now is the reconciler's clock (Clock when set: tests move it past
// GenerationGrace).
func (r *PDPairReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}
