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
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
)

// rolloutVerdict is RolloutCompatible as one judgement of the generations
// served found it.
type rolloutVerdict struct {
	compatible bool
	reason     pdv1.PDPairConditionReason
	message    string
}

// judgeCrossPairs judges every cross-generation pair (crossPairs) through
// the pair's engine, as the engine would judge a pair of those layouts:
// tokenspeed by mapping the ranks, vLLM and SGLang by their own rules.
// Contract pairs are judged from contracts the live engines give, which
// the operator reads for the current layouts only: their cross pairs are
// said to be unjudged rather than guessed.
func judgeCrossPairs(pair *pdv1.PDPair, gens []pdv1.PlanGeneration, model modelConfig) rolloutVerdict {
	cross := crossPairs(currentPair(pair), gens)
	if len(cross) == 0 {
		return rolloutVerdict{compatible: true, reason: pdv1.ReasonOneGeneration, message: "one generation is served: no instances of different layouts meet"}
	}
	var refused, judged []string
	for _, lp := range cross {
		spec := lp.Spec(pair.Spec)
		eng := engines.For(spec)
		if g := ownGeneration(gens, lp); g != nil {
			judged = append(judged, fmt.Sprintf("%s (generation %d's own pair, compatible when it was current)", lp, g.SpecGeneration))
			continue
		}
		if spec.Model == nil {
			// kvBuffers give item sizes for the current TPs only: another
			// TP's would be guessed, and the verdict with them.
			judged = append(judged, lp.String()+" (not judged: the pair gives kvBuffers for its current layouts only; give spec.model to have cross pairs judged)")
			continue
		}
		if eng.ReadsContracts(spec) {
			judged = append(judged, lp.String()+" (not judged: the cache contracts of older layouts are not read)")
			continue
		}
		if err := judgePair(eng, spec, model); err != nil {
			reason, msg := explainLayoutError(err)
			refused = append(refused, fmt.Sprintf("%s: %s: %s", lp, reason, msg))
			continue
		}
		judged = append(judged, lp.String())
	}
	if len(refused) > 0 {
		return rolloutVerdict{reason: pdv1.ReasonGenerationsIncompatible, message: fmt.Sprintf(
			"engine %s refuses %d of %d cross-generation pairs; rooms between those instances fail until one side's rollout finishes (hold the rollout: docs/rollouts.md): %s",
			engines.For(pair.Spec).Name(), len(refused), len(cross), strings.Join(refused, "; "))}
	}
	return rolloutVerdict{compatible: true, reason: pdv1.ReasonGenerationsCompatible,
		message: fmt.Sprintf("every cross-generation pair is compatible under engine %s's rules: %s", engines.For(pair.Spec).Name(), strings.Join(judged, "; "))}
}

// ownGeneration is the older generation whose own pair lp is, or nil.
func ownGeneration(gens []pdv1.PlanGeneration, lp LayoutPair) *pdv1.PlanGeneration {
	for i := range gens {
		if !gens[i].Current && (LayoutPair{gens[i].Prefill, gens[i].Decode}).equal(lp) {
			return &gens[i]
		}
	}
	return nil
}

// judgePair is the engine's verdict on one spec: resolved and mapped, as
// planning would, without planning.
func judgePair(eng engine.Engine, spec pdv1.PDPairSpec, model modelConfig) error {
	p, err := eng.Resolve(spec, engine.Inputs{ModelConfig: model.data})
	if err != nil {
		return err
	}
	_, err = p.Map()
	return err
}

// rolloutJudgements remembers each pair's last verdict, so that the
// reconciles the fleet's probes cause do not map the cross pairs again.
type rolloutJudgements struct {
	mu   sync.Mutex
	last map[types.NamespacedName]rolloutJudgement
}

type rolloutJudgement struct {
	key     string
	verdict rolloutVerdict
}

func newRolloutJudgements() *rolloutJudgements {
	return &rolloutJudgements{last: map[types.NamespacedName]rolloutJudgement{}}
}

// judge is judgeCrossPairs, answered from the last verdict when the spec,
// the model and the generations' layouts are the same.
func (j *rolloutJudgements) judge(pair *pdv1.PDPair, gens []pdv1.PlanGeneration, model modelConfig) rolloutVerdict {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%s", pair.Generation, model.version)
	for _, lp := range crossPairs(currentPair(pair), gens) {
		raw, _ := json.Marshal(lp) // plain API values: never fails
		fmt.Fprintf(&b, "|%s", raw)
	}
	key := b.String()
	name := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	j.mu.Lock()
	last, ok := j.last[name]
	j.mu.Unlock()
	if ok && last.key == key {
		return last.verdict
	}
	v := judgeCrossPairs(pair, gens, model)
	j.mu.Lock()
	j.last[name] = rolloutJudgement{key: key, verdict: v}
	j.mu.Unlock()
	return v
}

func (j *rolloutJudgements) forget(name types.NamespacedName) {
	j.mu.Lock()
	delete(j.last, name)
	j.mu.Unlock()
}
