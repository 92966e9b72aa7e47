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
	"slices"
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
// tokenspeed by mapping the ranks, vLLM and SGLang by their own rules. A
// cross pair the publisher planned (crosses, crossplans.go) is judged by
// that planning: a kvBuffers pair's composed layout, or a model pair's
// spec. Contract pairs are judged from contracts the live engines give,
// which the operator reads for the current layouts only: their cross
// pairs are said to be unjudged rather than guessed.
func judgeCrossPairs(pair *pdv1.PDPair, gens []pdv1.PlanGeneration, model modelConfig, crosses []crossPlan) rolloutVerdict {
	cross := crossPairs(currentPair(pair), gens)
	if len(cross) == 0 {
		return rolloutVerdict{compatible: true, reason: pdv1.ReasonOneGeneration, message: "one generation is served: no instances of different layouts meet"}
	}
	var refused, judged []string
	for _, lp := range cross {
		if g := ownGeneration(gens, lp); g != nil {
			judged = append(judged, fmt.Sprintf("%s (generation %d's own pair, compatible when it was current)", lp, g.SpecGeneration))
			continue
		}
		if entry, refusal := judgeCross(pair, lp, model, crosses); refusal != "" {
			refused = append(refused, fmt.Sprintf("%s: %s", lp, refusal))
		} else {
			judged = append(judged, entry)
		}
	}
	if len(refused) > 0 {
		return rolloutVerdict{reason: pdv1.ReasonGenerationsIncompatible, message: fmt.Sprintf(
			"engine %s refuses %d of %d cross-generation pairs; rooms between those instances fail until one side's rollout finishes (hold the rollout: docs/rollouts.md): %s",
			engines.For(pair.Spec).Name(), len(refused), len(cross), strings.Join(refused, "; "))}
	}
	return rolloutVerdict{compatible: true, reason: pdv1.ReasonGenerationsCompatible,
		message: fmt.Sprintf("every cross-generation pair is compatible under engine %s's rules: %s", engines.For(pair.Spec).Name(), strings.Join(judged, "; "))}
}

// judgeCross is one cross pair's verdict: what a compatible pair's entry
// in the message says, or the engine's refusal ("reason: message").
func judgeCross(pair *pdv1.PDPair, lp LayoutPair, model modelConfig, crosses []crossPlan) (entry, refusal string) {
	spec := lp.Spec(pair.Spec)
	eng := engines.For(spec)
	if eng.ReadsContracts(spec) {
		return lp.String() + " (not judged, not planned: the cache contracts of older layouts are not read)", ""
	}
	if i := slices.IndexFunc(crosses, func(c crossPlan) bool { return c.pair.equal(lp) }); i >= 0 {
		c := crosses[i]
		switch {
		case c.notPlanned != "":
			return fmt.Sprintf("%s (not judged: %s)", lp, c.notPlanned), ""
		case c.refused():
			return "", c.refusal()
		case !c.published():
			return fmt.Sprintf("%s (compatible; not published: %s)", lp, truncate(c.refusal(), 200)), ""
		}
		return lp.String() + " (planned and published)", ""
	}
	if _, composes := eng.(engine.CrossComposer); spec.Model == nil && composes {
		// composed from the sets published, which this reconcile did not
		// publish (the spec is not servable)
		return lp.String() + " (not judged: the pair gives kvBuffers, and its cross layouts are composed from the sets published, which are not published now)", ""
	}
	if spec.Model == nil {
		// kvBuffers give item sizes for the current TPs only: another
		// TP's would be guessed, and the verdict with them.
		return lp.String() + " (not judged: the pair gives kvBuffers for its current layouts only; give spec.model to have cross pairs judged)", ""
	}
	if err := judgePair(eng, spec, model); err != nil {
		reason, msg := explainLayoutError(err)
		return "", fmt.Sprintf("%s: %s", reason, msg)
	}
	return lp.String(), ""
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
func (j *rolloutJudgements) judge(pair *pdv1.PDPair, gens []pdv1.PlanGeneration, model modelConfig, crosses []crossPlan) rolloutVerdict {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%s", pair.Generation, model.version)
	for _, lp := range crossPairs(currentPair(pair), gens) {
		raw, _ := json.Marshal(lp) // plain API values: never fails
		fmt.Fprintf(&b, "|%s", raw)
	}
	for _, c := range crosses {
		hash := ""
		if c.out != nil {
			hash = c.out.hash + "/" + string(c.out.layoutReason)
		}
		fmt.Fprintf(&b, "|%s=%s%s", c.pair, hash, c.notPlanned)
	}
	key := b.String()
	name := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	j.mu.Lock()
	last, ok := j.last[name]
	j.mu.Unlock()
	if ok && last.key == key {
		return last.verdict
	}
	v := judgeCrossPairs(pair, gens, model, crosses)
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
