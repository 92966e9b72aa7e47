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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// hostilePair is the attack: a very wide prefill fleet feeding one
// decode rank over 8192 buffers, every field within the CRD's limits. Each
// buffer of the decode rank is cut into one fragment per prefill rank:
// 4096 × 8192 = 33,554,432 fragments, several GB of plan JSON.
func hostilePair(ns, name string) *pdv1.PDPair {
	return fixtures.Pair(ns, name).Prefill(4096, 1).Decode(1, 1).KVPair(4096, 4096, 1, 1).Obj()
}

// An over-budget PDPair is refused before anything is planned:
// PlansPublished=False/PlanTooLarge naming the count, the bytes and the flag,
// Ready=False, Stalled=True, a Warning event, and no ConfigMap.
func TestOverBudgetPairIsRefused(t *testing.T) {
	ns := newNamespace(t)
	p := hostilePair(ns, "hostile")
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonPlanTooLarge)
	for _, want := range []string{"33554432 fragments", "bytes of plan JSON", "--" + planbudget.FlagMaxFragments, "--" + planbudget.FlagMaxPlanBytes} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("PlansPublished message %q does not say %q", c.Message, want)
		}
	}
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonPlansNotPublished)
	wantCondition(t, got, pdv1.PDPairStalled, metav1.ConditionTrue, pdv1.ReasonPlanTooLarge)
	if got.Status.Plan != nil || len(planConfigMaps(t, got)) != 0 {
		t.Errorf("an over-budget pair shows plans %+v or ConfigMaps", got.Status.Plan)
	}
	wantEvent(t, got, corev1.EventTypeWarning, pdv1.ReasonPlanTooLarge)
}

// A published pair edited past the budget loses its plans (they no longer
// describe the spec), and comes back when edited back.
func TestPairEditedPastBudgetWithdrawsPlans(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "grows").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if n := len(planConfigMaps(t, got)); n == 0 {
		t.Fatal("no plan ConfigMaps published")
	}
	small := got.Spec
	got = waitObserved(t, updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = hostilePair(ns, "x").Spec }))
	wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonPlanTooLarge)
	testutil.Eventually(t, settle, "plans withdrawn", func() error {
		if cms := planConfigMaps(t, got); len(cms) != 0 {
			return errorf("ConfigMaps %v remain", configMapNames(cms))
		}
		return nil
	})
	got = waitObserved(t, updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = small }))
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairStalled)); c != nil {
		t.Fatalf("Stalled stays on a Ready pair: %+v", c)
	}
}
