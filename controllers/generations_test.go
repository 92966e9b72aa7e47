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
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// genView is one generation as the tests compare it.
type genView struct {
	prefillTP, decodeTP                  int32
	current                              bool
	decodePods, agents, prefillInstances int32
}

func viewOf(gens []pdv1.PlanGeneration) []genView {
	out := make([]genView, len(gens))
	for i, g := range gens {
		out[i] = genView{g.Prefill.TensorParallelSize, g.Decode.TensorParallelSize, g.Current, g.DecodePods, g.Agents, g.PrefillInstances}
	}
	return out
}

// waitGenerations waits until status.generations is want and
// RolloutCompatible has the status and reason, its message saying every
// part of says; it returns the pair.
func waitGenerations(t *testing.T, p *pdv1.PDPair, want []genView, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason, says ...string) *pdv1.PDPair {
	t.Helper()
	return testutil.EventuallyValue(t, settle, fmt.Sprintf("%s: generations %v, RolloutCompatible=%s/%s", p.Name, want, status, reason), func() (*pdv1.PDPair, error) {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return nil, err
		}
		if v := viewOf(got.Status.Generations); fmt.Sprint(v) != fmt.Sprint(want) {
			return nil, fmt.Errorf("generations %v", v)
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairRolloutCompatible))
		if cond == nil || cond.Status != status || cond.Reason != string(reason) || cond.ObservedGeneration != got.Generation {
			return nil, fmt.Errorf("RolloutCompatible %+v", cond)
		}
		for _, part := range says {
			if !strings.Contains(cond.Message, part) {
				return nil, fmt.Errorf("message %q does not say %q", cond.Message, part)
			}
		}
		return &got, nil
	})
}

// A decode rollout from TP 4 to TP 2 through the real API server: the old
// generation stays listed (with its pods, agents and the prefill instances
// they hold) while an old pod remains, its agent on the old plan is not
// counted stale, the publisher is told to plan both pairs; once the pod is
// gone the old generation stays for the grace period, then is dropped.
func TestDecodeRolloutGenerations(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "roll").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	p = waitObserved(t, p)
	oldHash := p.Status.Plan.Hash
	p = waitGenerations(t, p, []genView{{8, 4, true, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)
	if g := p.Status.Generations[0]; g.PlanHash != oldHash || g.SpecGeneration != p.Generation || g.Since.IsZero() {
		t.Fatalf("generation %+v: want plan %s, spec generation %d, a since", g, oldHash, p.Generation)
	}

	agent := fixtures.NewAgentProbe(oldHash)
	defer agent.Close()
	agent.Report("decodeLayout", "tp=4,dp=1")
	agent.Report("prefillLayoutsMet", []map[string]any{{"layout": "tp=8,dp=1", "instances": 3}, {"layout": "bogus", "instances": 9}})
	runPod(t, fixtures.DecodePod(ns, "old-0", "roll").Annotate(pdv1.AnnotationDecodeLayout, "tp=4,dp=1").WithAgent(agent.Port()).Obj(), fixtures.RunningStatus(true))
	waitGenerations(t, p, []genView{{8, 4, true, 1, 1, 3}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)

	p = updateSpec(t, p, func(p *pdv1.PDPair) { p.Spec = fixtures.Llama70B(8, 2) })
	p = waitGenerations(t, p, []genView{{8, 2, true, 0, 0, 3}, {8, 4, false, 1, 1, 3}}, metav1.ConditionTrue, pdv1.ReasonGenerationsCompatible,
		"prefill tp=8,dp=1 × decode tp=4,dp=1")
	if old := p.Status.Generations[1]; old.PlanHash != oldHash || !strings.Contains(old.Message, "1 decode pods and 1 agents of decode layout tp=4,dp=1 remain") {
		t.Fatalf("old generation %+v: want plan %s and why it is kept", old, oldHash)
	}
	if cur := p.Status.Generations[0]; cur.PlanHash != p.Status.Plan.Hash || cur.PlanHash == oldHash {
		t.Fatalf("current generation's plan %s, status.plan.hash %s, old %s", cur.PlanHash, p.Status.Plan.Hash, oldHash)
	}
	if got := fmt.Sprint(ServedLayoutPairs(p)); !strings.Contains(got, "prefill tp=8,dp=1 × decode tp=2,dp=1 prefill tp=8,dp=1 × decode tp=4,dp=1") {
		t.Fatalf("ServedLayoutPairs: %s, want the new pair then the old", got)
	}
	// The old pod's agent runs the old generation's plan: not stale.
	waitFleet(t, p, metav1.ConditionTrue, pdv1.ReasonAgentsCurrent, 1, 1, 1)

	if err := k8s.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old-0"}}); err != nil {
		t.Fatal(err)
	}
	p = waitGenerations(t, p, []genView{{8, 2, true, 0, 0, 0}, {8, 4, false, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonGenerationsCompatible)
	if msg := p.Status.Generations[1].Message; !strings.Contains(msg, "nothing seen using it since") {
		t.Fatalf("old generation's message %q: want it to say it is in its grace period", msg)
	}
	testClock.advance(GenerationGrace + lastUsedStep)
	defer testClock.advance(-(GenerationGrace + lastUsedStep))
	// The requeue at the grace's end is in real time: a pod appearing
	// reconciles the pair now.
	runPod(t, fixtures.DecodePod(ns, "new-0", "roll").Obj(), fixtures.RunningStatus(true))
	waitGenerations(t, p, []genView{{8, 2, true, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)
}

// A vLLM rollout the engine would refuse across generations: decode moves
// from TP 2 to TP 4 and both roles from HND to NHD. The new pair alone is
// compatible, but an old HND decode pod meeting the new NHD prefill (and
// the reverse) is refused by vLLM's same-kv-cache-layout rule: the
// condition names both cross pairs with the engine's reason.
func TestRolloutCompatibleJudgesCrossPairsByTheEngine(t *testing.T) {
	ns := newNamespace(t)
	p := enginePair(ns, "vroll", vllmEngine).Obj()
	create(t, p)
	p = waitObserved(t, p)
	waitGenerations(t, p, []genView{{4, 2, true, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)
	// A vLLM pod has no injected agent; its template carries the layout.
	runPod(t, fixtures.DecodePod(ns, "v-old", "vroll").Annotate(pdv1.AnnotationDecodeLayout, "tp=2,dp=1").Obj(), fixtures.RunningStatus(true))
	waitGenerations(t, p, []genView{{4, 2, true, 1, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)

	p = updateSpec(t, p, func(p *pdv1.PDPair) {
		p.Spec.Decode.TensorParallelSize = 4
		p.Spec.Prefill.KVCacheLayout, p.Spec.Decode.KVCacheLayout = pdv1.KVCacheLayoutNHD, pdv1.KVCacheLayoutNHD
	})
	wantCondition(t, waitObserved(t, p), pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	waitGenerations(t, p, []genView{{4, 4, true, 0, 0, 0}, {4, 2, false, 1, 0, 0}}, metav1.ConditionFalse, pdv1.ReasonGenerationsIncompatible,
		"engine vllm refuses 2 of 2 cross-generation pairs",
		"prefill tp=4,dp=1 × decode tp=4,dp=1: KVCacheLayoutMismatch", "prefill tp=4,dp=1 × decode tp=2,dp=1: KVCacheLayoutMismatch",
		"docs/rollouts.md")
}

// A vLLM upgrade at the same layouts: both roles move from vLLM 0.10.2
// to 0.11.0. The new pair alone is compatible, but an old decode pod
// meeting a new prefill (and the reverse) fails vLLM's handshake, whose
// compatibility hash covers the version: RolloutCompatible names both
// cross pairs and both versions, and the pods of each version count for
// their own generation.
func TestRolloutCompatibleJudgesAnEngineUpgrade(t *testing.T) {
	ns := newNamespace(t)
	p := enginePair(ns, "vup", vllmEngine).Edit(func(p *pdv1.PDPair) {
		p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.10.2", "0.10.2"
	}).Obj()
	create(t, p)
	p = waitObserved(t, p)
	waitGenerations(t, p, []genView{{4, 2, true, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)
	// As the webhook records them on a vLLM decode pod.
	runPod(t, fixtures.DecodePod(ns, "v-old", "vup").Annotate(pdv1.AnnotationDecodeLayout, "tp=2,dp=1").Annotate(pdv1.AnnotationEngineVersion, "0.10.2").Obj(), fixtures.RunningStatus(true))
	waitGenerations(t, p, []genView{{4, 2, true, 1, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)

	p = updateSpec(t, p, func(p *pdv1.PDPair) {
		p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.11.0", "0.11.0"
	})
	wantCondition(t, waitObserved(t, p), pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	runPod(t, fixtures.DecodePod(ns, "v-new", "vup").Annotate(pdv1.AnnotationDecodeLayout, "tp=2,dp=1").Annotate(pdv1.AnnotationEngineVersion, "0.11.0").Obj(), fixtures.RunningStatus(true))
	got := waitGenerations(t, p, []genView{{4, 2, true, 1, 0, 0}, {4, 2, false, 1, 0, 0}}, metav1.ConditionFalse, pdv1.ReasonGenerationsIncompatible,
		"engine vllm refuses 2 of 2 cross-generation pairs",
		"prefill tp=4,dp=1 on engine version 0.10.2 × decode tp=2,dp=1 on engine version 0.11.0: EngineVersionMismatch",
		"prefill tp=4,dp=1 on engine version 0.11.0 × decode tp=2,dp=1 on engine version 0.10.2: EngineVersionMismatch",
		"prefill runs vLLM 0.10.2, decode vLLM 0.11.0", "compute_nixl_compatibility_hash")
	for i, want := range []string{"0.11.0", "0.10.2"} {
		if g := got.Status.Generations[i]; g.Prefill.EngineVersion != want || g.Decode.EngineVersion != want {
			t.Errorf("generation %d runs prefill %q, decode %q; want %s on both", i, g.Prefill.EngineVersion, g.Decode.EngineVersion, want)
		}
	}
	if msg := got.Status.Generations[1].Message; !strings.Contains(msg, "1 decode pods and 0 agents of decode layout tp=2,dp=1 on engine version 0.10.2 remain") {
		t.Errorf("old generation's message %q: want it kept by the old-version pod", msg)
	}
}

// An edit the engine refuses mid-rollout adds no generation: the one
// served keeps serving, and says so.
func TestIncompatibleEditKeepsTheGenerationServing(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "keep").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	p = waitObserved(t, p)
	waitGenerations(t, p, []genView{{8, 4, true, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonOneGeneration)
	p = updateSpec(t, p, func(p *pdv1.PDPair) { p.Spec.Decode.TensorParallelSize = 3 })
	got := waitGenerations(t, p, []genView{{8, 4, false, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonGenerationsCompatible)
	if msg := got.Status.Generations[0].Message; !strings.Contains(msg, "still served") || !strings.Contains(msg, fmt.Sprintf("generation %d is not servable", got.Generation)) {
		t.Fatalf("kept generation's message %q: want it to say it keeps serving and why", msg)
	}
}
