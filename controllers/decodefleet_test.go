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
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// runPod creates a decode pod and writes the status the kubelet would.
func runPod(t *testing.T, pod *corev1.Pod, status corev1.PodStatus) {
	t.Helper()
	create(t, pod)
	pod.Status = status
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("writing pod %s's status: %v", pod.Name, err)
	}
}

// waitFleet waits until DecodeAgentsCurrent has the status and reason, the
// fleet counts are as given and the message says every part of says (a pod
// created and then given a status passes through other states first), and
// returns the condition.
func waitFleet(t *testing.T, p *pdv1.PDPair, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason, pods, ready, current int32, says ...string) {
	t.Helper()
	testutil.Eventually(t, settle, fmt.Sprintf("%s: DecodeAgentsCurrent=%s/%s with %d/%d/%d", p.Name, status, reason, pods, ready, current), func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairDecodeAgentsCurrent))
		f := got.Status.DecodeFleet
		switch {
		case cond == nil || f == nil:
			return fmt.Errorf("no fleet status yet")
		case cond.Status != status || cond.Reason != string(reason):
			return fmt.Errorf("condition %s/%s: %s", cond.Status, cond.Reason, cond.Message)
		case f.Pods != pods || f.AgentsReady != ready || f.AgentsCurrent != current:
			return fmt.Errorf("fleet %+v", *f)
		}
		for _, part := range says {
			if !strings.Contains(cond.Message, part) {
				return fmt.Errorf("message %q does not say %q", cond.Message, part)
			}
		}
		return nil
	})
}

// The fleet status follows decode pods and what their agents report: no
// pods; all current; one agent on an older plan (named, with both hashes)
// until it loads the new one; one agent not ready. Pods of other pairs and
// unlabelled pods are not counted.
func TestDecodeFleetStatus(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "fleet").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	p = waitObserved(t, p)
	current := p.Status.Plan.Hash
	waitFleet(t, p, metav1.ConditionFalse, pdv1.ReasonNoDecodePods, 0, 0, 0, "pd.pdtopo.dev/pdpair=fleet")

	agent0 := fixtures.NewAgentProbe(current)
	defer agent0.Close()
	agent1 := fixtures.NewAgentProbe("0ldplan0ldplan0ldplan")
	defer agent1.Close()
	runPod(t, fixtures.DecodePod(ns, "decode-0", "fleet").WithAgent(agent0.Port()).Obj(), fixtures.RunningStatus(true))
	// Not counted: another pair's decode pod, and a pod with only the pair label.
	runPod(t, fixtures.DecodePod(ns, "other-0", "other").WithAgent(agent1.Port()).Obj(), fixtures.RunningStatus(true))
	runPod(t, fixtures.Pod(ns, "prefill-0").Label(pdv1.LabelPDPair, "fleet").WithAgent(agent1.Port()).Obj(), fixtures.RunningStatus(true))
	waitFleet(t, p, metav1.ConditionTrue, pdv1.ReasonAgentsCurrent, 1, 1, 1, current[:12])

	runPod(t, fixtures.DecodePod(ns, "decode-1", "fleet").WithAgent(agent1.Port()).Obj(), fixtures.RunningStatus(true))
	waitFleet(t, p, metav1.ConditionFalse, pdv1.ReasonAgentsOnStalePlan, 2, 2, 1, "decode-1", "0ldplan0ldp", current[:12], "1 of 2")
	// The agent loads the current plan: no pod changes, the recheck sees it.
	agent1.Set(current, "")
	waitFleet(t, p, metav1.ConditionTrue, pdv1.ReasonAgentsCurrent, 2, 2, 2)

	// A pod whose agent is not ready (still loading; the agent says why).
	agent1.Set(current, "planstore: index.json: no such file")
	runPod(t, fixtures.DecodePod(ns, "decode-2", "fleet").WithAgent(agent1.Port()).Obj(), fixtures.RunningStatus(false))
	waitFleet(t, p, metav1.ConditionFalse, pdv1.ReasonAgentsNotReady, 3, 2, 2, "decode-2", "running but not ready", "no such file")
	// And a pod not yet scheduled (no IP): not ready, not probed.
	create(t, fixtures.DecodePod(ns, "decode-3", "fleet").WithAgent(agent1.Port()).Obj())
	waitFleet(t, p, metav1.ConditionFalse, pdv1.ReasonAgentsNotReady, 4, 2, 2, "decode-3 (the pod is Pending")

	// An unreachable agent is not current, and says so.
	for _, name := range []string{"decode-2", "decode-3"} {
		if err := k8s.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	agent0.Close()
	waitFleet(t, p, metav1.ConditionFalse, pdv1.ReasonAgentsNotReady, 2, 2, 1, "decode-0 (the agent's probe address does not answer")
}

// The manager caches decode pods only: the cache's pod selector matches a
// pod with both labels and nothing else.
func TestCacheHoldsOnlyDecodePods(t *testing.T) {
	var selector labels.Selector
	for obj, by := range CacheOptions().ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			selector = by.Label
		}
	}
	if selector == nil {
		t.Fatal("the cache options do not restrict pods: the manager would cache every pod in the cluster")
	}
	for set, want := range map[string]bool{
		"pd.pdtopo.dev/pdpair=a,pd.pdtopo.dev/role=decode": true,
		"pd.pdtopo.dev/pdpair=a":                           false,
		"pd.pdtopo.dev/role=decode":                        false,
		"pd.pdtopo.dev/pdpair=a,pd.pdtopo.dev/role=index":  false,
		"app=web": false,
	} {
		l, err := labels.ConvertSelectorToLabelsMap(set)
		if err != nil {
			t.Fatal(err)
		}
		if got := selector.Matches(l); got != want {
			t.Errorf("cache selector %s on {%s} = %v, want %v", selector, set, got, want)
		}
	}
}

// A large lagging fleet: the status lists at most MaxLaggingPods pods, the
// condition names a few and counts the rest, so the status stays small.
func TestFleetStatusCapsLagging(t *testing.T) {
	var obs fleetObservation
	obs.currentHash = "0123456789abcdef"
	for i := range 25 {
		obs.add(fixtures.DecodePod("ns", fmt.Sprintf("decode-%02d", i), "p").Obj(), nil)
	}
	p := fixtures.Pair("ns", "p").Generation(3).Obj()
	setFleetStatus(p, obs)
	f := p.Status.DecodeFleet
	if f.Pods != 25 || f.AgentsReady != 0 || len(f.Lagging) != pdv1.MaxLaggingPods {
		t.Fatalf("fleet %d pods, %d ready, %d lagging listed; want 25, 0, %d", f.Pods, f.AgentsReady, len(f.Lagging), pdv1.MaxLaggingPods)
	}
	c := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairDecodeAgentsCurrent))
	for _, want := range []string{"25 of 25", "decode-00 (the pod has no pdtopo-agent container", "decode-04", "and 20 more"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
	if strings.Contains(c.Message, "decode-05") || c.ObservedGeneration != 3 {
		t.Errorf("message %q names more than %d pods, or observedGeneration %d != 3", c.Message, laggingInMessage, c.ObservedGeneration)
	}
}
