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

package localcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// generationName is a generation as the scenario names it: "P8×D4",
// with " current" for the spec's.
func generationName(g pdv1.PlanGeneration) string {
	s := fmt.Sprintf("P%d×D%d", g.Prefill.TensorParallelSize, g.Decode.TensorParallelSize)
	if g.Current {
		s += " current"
	}
	return s
}

// GenerationNames lists status.generations in order (generationName).
func GenerationNames(p *pdv1.PDPair) []string {
	var out []string
	for _, g := range p.Status.Generations {
		out = append(out, generationName(g))
	}
	return out
}

// conditionLine is one condition as `kubectl get pdp -o yaml` holds it.
func conditionLine(p *pdv1.PDPair, t pdv1.PDPairConditionType) string {
	c := meta.FindStatusCondition(p.Status.Conditions, string(t))
	if c == nil {
		return fmt.Sprintf("%s: (not set)", t)
	}
	stale := ""
	if c.ObservedGeneration != p.Generation {
		stale = fmt.Sprintf(" (of spec generation %d)", c.ObservedGeneration)
	}
	return fmt.Sprintf("%s: %s/%s%s: %s", t, c.Status, c.Reason, stale, strings.TrimSpace(c.Message))
}

// StatusText is what the rollout shows of the pair's status at a step:
// status.generations, RolloutCompatible and PlansPublished.
func StatusText(p *pdv1.PDPair) string {
	var b strings.Builder
	hash := ""
	if p.Status.Plan != nil {
		hash = p.Status.Plan.Hash
	}
	fmt.Fprintf(&b, "  spec: prefill TP %d, decode TP %d (generation %d); status.plan.hash %.12s\n",
		p.Spec.Prefill.TensorParallelSize, p.Spec.Decode.TensorParallelSize, p.Generation, hash)
	b.WriteString("  status.generations:\n")
	for _, g := range p.Status.Generations {
		fmt.Fprintf(&b, "    - %-16s specGeneration %d, planHash %.12s, decodePods %d, agents %d, prefillInstances %d",
			generationName(g), g.SpecGeneration, g.PlanHash, g.DecodePods, g.Agents, g.PrefillInstances)
		if g.Message != "" {
			fmt.Fprintf(&b, "\n        message: %s", g.Message)
		}
		b.WriteString("\n")
	}
	for _, t := range []pdv1.PDPairConditionType{pdv1.PDPairRolloutCompatible, pdv1.PDPairPlansPublished} {
		b.WriteString("  " + conditionLine(p, t) + "\n")
	}
	return b.String()
}

// waitPair polls the pair until check passes, for rolloutSettle at most;
// the error names the last reason it did not.
func waitPair(ctx context.Context, c client.Client, key client.ObjectKey, what string, check func(*pdv1.PDPair) error) (*pdv1.PDPair, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutSettle)
	defer cancel()
	var p pdv1.PDPair
	err := waitUntil(ctx, rolloutSettle, 200*time.Millisecond, func() error {
		if err := c.Get(ctx, key, &p); err != nil {
			return err
		}
		return check(&p)
	})
	if err != nil {
		return nil, fmt.Errorf("PDPair %s: %s not seen within %s: %v", key, what, rolloutSettle, err)
	}
	return &p, nil
}

// wantGenerations checks status.generations are want, in order, for the
// spec's generation, with RolloutCompatible True for it.
func wantGenerations(want ...string) func(*pdv1.PDPair) error {
	return func(p *pdv1.PDPair) error {
		if got := GenerationNames(p); !slices.Equal(got, want) {
			return fmt.Errorf("status.generations %q, want %q", got, want)
		}
		c := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairRolloutCompatible))
		if c == nil || c.ObservedGeneration != p.Generation || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("%s, want True for generation %d", conditionLine(p, pdv1.PDPairRolloutCompatible), p.Generation)
		}
		for _, g := range p.Status.Generations {
			if g.Current && (p.Status.Plan == nil || g.PlanHash != p.Status.Plan.Hash) {
				return fmt.Errorf("the current generation's planHash %q is not status.plan.hash", g.PlanHash)
			}
		}
		return nil
	}
}

// generationHash is the plan hash of the generation of those TP sizes.
func generationHash(p *pdv1.PDPair, prefillTP, decodeTP int32) string {
	for _, g := range p.Status.Generations {
		if g.Prefill.TensorParallelSize == prefillTP && g.Decode.TensorParallelSize == decodeTP {
			return g.PlanHash
		}
	}
	return ""
}
