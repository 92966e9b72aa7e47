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
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Every LayoutCompatible reason a spec that passes the API server can reach.
func TestLayoutCompatibleReasons(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		pair   *pdv1.PDPair
		status metav1.ConditionStatus
		reason pdv1.PDPairConditionReason
		says   string
	}{
		{fixtures.Pair(ns, "gqa").Spec(fixtures.Llama70B(8, 4)).Obj(), metav1.ConditionTrue, pdv1.ReasonCompatible, "fragmented plans; each decode rank contacts 2 prefill ranks"},
		{fixtures.Pair(ns, "fp8-prefill").Prefill(8, 1).Decode(4, 1).KVGroup(pdv1.KVTargetK, fixtures.Geometry(80, 512, 128, 256, 128)).KVGroup(pdv1.KVTargetV, fixtures.Geometry(80, 512, 128, 256, 128)).Obj(),
			metav1.ConditionFalse, pdv1.ReasonUnitSizeMismatch, "kvBuffers[0] (TargetK)"},
		{fixtures.Pair(ns, "ragged-item").Prefill(8, 1).Decode(4, 1).KVPair(2, 500, 256, 256).Obj(),
			metav1.ConditionFalse, pdv1.ReasonItemNotUnitAligned, "kvBuffers[0]"},
		{fixtures.Pair(ns, "sixteen-heads-on-eight").Prefill(8, 1).Decode(4, 1).KVPair(2, 1024, 256, 256).Obj(),
			metav1.ConditionFalse, pdv1.ReasonUnsupportedHeterogeneousTP, "kvBuffers[0]"},
		{fixtures.Pair(ns, "sixteen-token-pages").TokensPerPage(16).Prefill(8, 1).Decode(4, 1).KVPair(2, 16*512, 16*256, 256).Obj(),
			metav1.ConditionTrue, pdv1.ReasonCompatible, "16 fragments per page for each buffer a decode rank pulls from a prefill rank"},
		// 16-token pages whose "unit" is a head of 16 tokens: a token row (a
		// sixteenth of the item) is not whole units.
		{fixtures.Pair(ns, "sixteen-token-pages-ragged-rows").TokensPerPage(16).Prefill(8, 1).Decode(4, 1).KVPair(2, 2*16*256, 16*256, 16*256).Obj(),
			metav1.ConditionFalse, pdv1.ReasonItemNotTokenAligned, "pages hold 16 tokens"},
		{fixtures.Pair(ns, "mla-default-prefill-item").MLA().Prefill(16, 1).Decode(8, 1).KVGroup(pdv1.KVTargetK, fixtures.Geometry(61, 1152, 576, 1, 1)).Obj(),
			metav1.ConditionFalse, pdv1.ReasonMLAItemSizeMismatch, "prefill item 576 bytes, decode item 1152 bytes"},
		{fixtures.Pair(ns, "state-apart-from-draft-heads").Prefill(4, 1).Decode(2, 1).
			KVGroup(pdv1.KVTargetK, fixtures.Geometry(1, 64, 32, 2, 2)).KVGroup(pdv1.KVTargetV, fixtures.Geometry(1, 64, 32, 2, 2)).
			KVGroup(pdv1.KVDraftK, fixtures.Geometry(1, 2, 4, 2, 2)).KVGroup(pdv1.KVDraftV, fixtures.Geometry(1, 2, 4, 2, 2)).State(fixtures.Geometry(1, 64, 32, 2, 2)).Obj(),
			metav1.ConditionFalse, pdv1.ReasonWholeStateCopyUnsafe, "decode TP rank 1 pulls KV cache from prefill TP rank 0"},
		// The default prefill item, decodeItemBytes×D/P = 1×4/8, is 0: the
		// one structural fault CEL cannot see, as it depends on the defaults.
		{fixtures.Pair(ns, "zero-default-item").Prefill(8, 1).Decode(4, 1).Edit(func(p *pdv1.PDPair) {
			g := pdv1.BufferGeometry{Count: 1, DecodeItemBytes: 1}
			p.Spec.KVBuffers = []pdv1.KVBufferGroup{{Kind: pdv1.KVTargetK, BufferGeometry: g}, {Kind: pdv1.KVTargetV, BufferGeometry: g}}
		}).Obj(), metav1.ConditionFalse, pdv1.ReasonInvalidLayout, "kvBuffers[0].prefillItemBytes"},
	}
	for _, c := range cases {
		create(t, c.pair)
	}
	for _, c := range cases {
		t.Run(string(c.reason), func(t *testing.T) {
			got := waitObserved(t, c.pair)
			cond := wantCondition(t, got, pdv1.PDPairLayoutCompatible, c.status, c.reason)
			if !strings.Contains(cond.Message, c.says) {
				t.Errorf("message %q does not mention %q", cond.Message, c.says)
			}
			if c.status == metav1.ConditionFalse {
				// docs/layout-verdicts.md: every False message ends with the fix.
				if _, fix, ok := strings.Cut(cond.Message, ". Fix: "); !ok || fix == "" {
					t.Errorf("message %q does not end with a fix", cond.Message)
				}
				wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible)
				wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible)
				if got.Status.Plan != nil || len(planConfigMaps(t, got)) != 0 {
					t.Errorf("an incompatible pair shows plans %+v / ConfigMaps", got.Status.Plan)
				}
				wantEvent(t, got, corev1.EventTypeWarning, c.reason)
			} else {
				wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
				wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
				wantEvent(t, got, corev1.EventTypeNormal, pdv1.ReasonCompatible)
			}
		})
	}
}

// wantEvent waits for an event about the PDPair with the type and reason.
func wantEvent(t *testing.T, p *pdv1.PDPair, eventType string, reason pdv1.PDPairConditionReason) {
	t.Helper()
	testutil.Eventually(t, settle, fmt.Sprintf("a %s event %s about %s", eventType, reason, p.Name), func() error {
		var list eventsv1.EventList
		if err := k8s.List(context.Background(), &list, client.InNamespace(p.Namespace)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name == p.Name && e.Regarding.Kind == "PDPair" {
				if e.Type == eventType && e.Reason == string(reason) {
					return nil
				}
				seen = append(seen, e.Type+"/"+e.Reason)
			}
		}
		return fmt.Errorf("events seen: %v", seen)
	})
}

// A ConfigMap of someone else's under a plan ConfigMap's name is never
// overwritten: PlansPublished=False, ConfigMapConflict, and Ready says why.
func TestConfigMapConflict(t *testing.T) {
	ns := newNamespace(t)
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama-plans-0"}, Data: map[string]string{"mine": "yes"}}
	create(t, theirs)
	p := fixtures.Pair(ns, "llama").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonConfigMapConflict)
	if !strings.Contains(c.Message, "llama-plans-0") {
		t.Errorf("message %q does not name the ConfigMap", c.Message)
	}
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonPlansNotPublished)
	var after corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(theirs), &after); err != nil || after.Data["mine"] != "yes" {
		t.Fatalf("the foreign ConfigMap was changed: %v %v", err, after.Data)
	}
}

// One decode rank's plan larger than a ConfigMap: prefill TP64 → decode TP1
// over 4000 buffers puts 256 000 fragments in rank 0's plan.
func TestRankTooLarge(t *testing.T) {
	t.Parallel() // slow and independent: overlaps with the other slow tests
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "one-decode-rank").Prefill(64, 1).Decode(1, 1).KVPair(2000, 4096, 64, 64).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonRankTooLarge)
	if !strings.Contains(c.Message, "decode TP rank 0") {
		t.Errorf("message %q does not name the rank", c.Message)
	}
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonPlansNotPublished)
}

// An index larger than a ConfigMap: the most KV buffers allowed (16 384),
// each recorded in the index's layout with four 10-digit lengths (1 GiB pages).
func TestIndexTooLarge(t *testing.T) {
	ns := newNamespace(t)
	const gib = 1 << 30
	p := fixtures.Pair(ns, "many-buffers").Prefill(1, 1).Decode(1, 1).KVPair(4096, gib, gib, gib).KVPair(4096, gib, gib, gib).Obj()
	create(t, p)
	got := waitObserved(t, p)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonIndexTooLarge)
	if !strings.Contains(c.Message, "index") {
		t.Errorf("message %q does not say the index is too large", c.Message)
	}
}

// A transient API failure (here an admission policy that denies plan
// ConfigMaps in the namespace) is PublishFailed, retried with backoff, and
// clears once the API accepts the writes.
func TestPublishFailedIsRetried(t *testing.T) {
	t.Parallel() // slow and independent: overlaps with the other slow tests
	ns := newNamespace(t)
	unblock := denyConfigMaps(t, ns)
	p := fixtures.Pair(ns, "blocked").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonPublishFailed)
	if !strings.Contains(c.Message, "denied by pdtopo test policy") {
		t.Errorf("message %q does not carry the API server's answer", c.Message)
	}
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonPlansNotPublished)
	unblock()
	testutil.Eventually(t, 30*time.Second, "plans published after the policy is gone", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.Plan == nil {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
}

// denyConfigMaps installs a ValidatingAdmissionPolicy that rejects plan
// ConfigMap writes in one namespace, waits until it is enforced, and returns
// a function that removes it.
func denyConfigMaps(t *testing.T, ns string) func() {
	t.Helper()
	ctx := context.Background()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-plans-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "denied by pdtopo test policy"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	create(t, policy)
	create(t, binding)
	testutil.Eventually(t, settle, "the admission policy is enforced", func() error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"}}
		if err := k8s.Create(ctx, probe); err == nil {
			_ = k8s.Delete(ctx, probe)
			return fmt.Errorf("a ConfigMap was still admitted")
		}
		return nil
	})
	return func() {
		if err := k8s.Delete(ctx, binding); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Delete(ctx, policy); err != nil {
			t.Fatal(err)
		}
	}
}

// Reasons no object admitted by the API server can reach are still mapped
// by type: the CRD rejects L1.5 without MLA, and ShardNotAligned and
// ItemSmallerThanShard are the planner's defensive checks.
func TestUnreachableReasonsAreMappedByType(t *testing.T) {
	p := fixtures.Pair("ns", "l15").Spec(fixtures.Llama70B(8, 4)).L15().Obj()
	out := planPair(p, transferplan.DefaultBudget)
	if out.compatible || out.layoutReason != pdv1.ReasonMLAL15RequiresMLA || !strings.Contains(out.layoutMessage, "mlaL15Cache") {
		t.Fatalf("L1.5 on MHA: compatible %v reason %s message %q", out.compatible, out.layoutReason, out.layoutMessage)
	}
	if r, _ := explainLayoutError(fmt.Errorf("not a layout error")); r != pdv1.ReasonPlanningFailed {
		t.Errorf("an untyped planner error maps to %s, want %s", r, pdv1.ReasonPlanningFailed)
	}
	if publishReason("SomethingNew") != pdv1.ReasonPlansNotEncodable || publishReason(planstore.ReasonRankTooLarge) != pdv1.ReasonRankTooLarge {
		t.Error("encoder reasons are not mapped")
	}
}

// The reason table covers the planner's own list of reasons and the model
// derivation's (not the table's keys), so a reason either grows without a
// mapping in the API vocabulary fails here; each maps to the condition
// reason of the same word, as the API documents.
func TestEveryPlannerReasonHasAConditionReason(t *testing.T) {
	planner := transferplan.Reasons()
	if len(planner) < 9 {
		t.Fatalf("the planner lists %d reasons: %v", len(planner), planner)
	}
	for _, r := range modelgeom.Reasons() {
		planner = append(planner, transferplan.Reason(r))
	}
	planner = append(planner, transferplan.Reason(pdv1.ReasonModelConfigUnavailable), transferplan.Reason(pdv1.ReasonContractParallelismMismatch),
		transferplan.Reason(pdv1.ReasonBootstrapAddressNotAllowed))
	planner = append(planner, engines.Reasons()...)
	for _, r := range planner {
		got, ok := layoutReasons[r]
		switch {
		case !ok:
			t.Errorf("planner reason %s has no entry in layoutReasons (add a pdv1 reason constant and map it)", r)
		case string(got) != string(r):
			t.Errorf("planner reason %s maps to condition reason %s, want the same word", r, got)
		}
	}
	for r := range layoutReasons {
		if !slices.Contains(planner, r) {
			t.Errorf("layoutReasons maps %s, which the planner does not list", r)
		}
	}
}
