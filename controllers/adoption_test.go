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
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Users' ConfigMaps that carry the pair label survive publishing,
// republishing, withdrawal and the pair's deletion: the operator adopts,
// updates and deletes only ConfigMaps under the pair's plan names that carry
// the role label it writes there (kustomize commonLabels on a decode app put
// the pair label, and the decode role, on every ConfigMap of the app).
func TestUserConfigMapsWithThePairLabelSurvive(t *testing.T) {
	ns := newNamespace(t)
	const pair = "keep"
	label := func(role string) map[string]string {
		l := map[string]string{pdv1.LabelPDPair: pair, "app": "decode"}
		if role != "" {
			l[pdv1.LabelRole] = role
		}
		return l
	}
	users := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "engine-config", Labels: label("")}, Data: map[string]string{"engine.yaml": "tp: 4"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "engine-flags", Labels: label(pdv1.RoleDecode)}, Data: map[string]string{"flags": "--x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "engine-index", Labels: label(pdv1.RolePlanIndex)}, Data: map[string]string{"index.json": "{}"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "engine-shard", Labels: label(pdv1.RolePlanShard)}, BinaryData: map[string][]byte{"rank-0000.json.gz": {1, 2}}},
		// plan-like names that are not the pair's plan names
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-32", Labels: label(pdv1.RolePlanShard)}, Data: map[string]string{"a": "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-07", Labels: label(pdv1.RolePlanShard)}, Data: map[string]string{"a": "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-x", Labels: label(pdv1.RolePlanShard)}, Data: map[string]string{"a": "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-index", Labels: label(pdv1.RolePlanIndex)}, Data: map[string]string{"a": "b"}},
		// a plan name the pair does not use, without the role label
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-5", Labels: label("")}, Data: map[string]string{"mine": "yes"}},
		// a plan name with the other role's label
		{ObjectMeta: metav1.ObjectMeta{Name: pair + "-plans-6", Labels: label(pdv1.RolePlanIndex)}, Data: map[string]string{"mine": "yes"}},
	}
	for _, cm := range users {
		cm.Namespace = ns
		create(t, cm)
	}
	survive := func(step string) {
		t.Helper()
		for _, want := range users {
			var got corev1.ConfigMap
			err := k8s.Get(context.Background(), client.ObjectKeyFromObject(want), &got)
			if apierrors.IsNotFound(err) {
				t.Fatalf("%s: the user's ConfigMap %s was deleted", step, want.Name)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.OwnerReferences) != 0 || !maps.Equal(got.Labels, want.Labels) || len(got.Annotations) != 0 ||
				!sameStrings(got.Data, want.Data) || !sameBytes(got.BinaryData, want.BinaryData) {
				t.Fatalf("%s: the user's ConfigMap %s was changed: owners %v labels %v annotations %v data %v binaryData %v",
					step, want.Name, got.OwnerReferences, got.Labels, got.Annotations, got.Data, got.BinaryData)
			}
		}
	}

	p := fixtures.Pair(ns, pair).Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	survive("published")

	// republished: another layout, another plan
	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 40, 40 })
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	survive("republished")

	// withdrawn: every ConfigMap the pair may manage is deleted
	good := got.Spec.DeepCopy()
	got = updateSpec(t, got, func(p *pdv1.PDPair) {
		p.Spec.KVBuffers[0].PrefillUnitBytes = ptrTo[int64](128)
		p.Spec.KVBuffers[0].PrefillItemBytes = ptrTo[int64](128)
	})
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible)
	testutil.Eventually(t, settle, "the plans are withdrawn", func() error {
		for _, name := range []string{pair + "-plans", pair + "-plans-0"} {
			if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: %v", name, err)
			}
		}
		return nil
	})
	survive("withdrawn")

	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = *good })
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	survive("published again")

	// deleted: the garbage collector (absent here) deletes what the pair
	// controls, so nothing of the user's may name it as an owner
	if err := k8s.Delete(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the pair is gone", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(got), &pdv1.PDPair{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	survive("the pair deleted")
}

// claimable, case by case: the name must be one of the pair's plan names;
// then the pair's controller reference, or no controller and both labels
// the operator writes there.
func TestClaimable(t *testing.T) {
	pair := fixtures.Pair("ns", "llama").UID("uid-1").Obj()
	other := fixtures.Pair("ns", "llama").UID("uid-2").Obj()
	ref := func(p *pdv1.PDPair) []metav1.OwnerReference {
		return []metav1.OwnerReference{*metav1.NewControllerRef(p, pdv1.GroupVersion.WithKind("PDPair"))}
	}
	labels := func(role string) map[string]string {
		l := map[string]string{pdv1.LabelPDPair: "llama"}
		if role != "" {
			l[pdv1.LabelRole] = role
		}
		return l
	}
	for _, c := range []struct {
		what   string
		name   string
		labels map[string]string
		owners []metav1.OwnerReference
		want   bool
	}{
		{"our shard", "llama-plans-0", labels(pdv1.RolePlanShard), ref(pair), true},
		{"our index", "llama-plans", labels(pdv1.RolePlanIndex), ref(pair), true},
		{"our shard, labels stripped", "llama-plans-3", nil, ref(pair), true},
		{"an orphan shard of ours", "llama-plans-31", labels(pdv1.RolePlanShard), nil, true},
		{"an orphan index of ours", "llama-plans", labels(pdv1.RolePlanIndex), nil, true},
		{"an orphan without the role label", "llama-plans-0", labels(""), nil, false},
		{"an orphan with the decode role", "llama-plans-0", labels(pdv1.RoleDecode), nil, false},
		{"an orphan with the index role under a shard name", "llama-plans-0", labels(pdv1.RolePlanIndex), nil, false},
		{"an orphan with the shard role under the index name", "llama-plans", labels(pdv1.RolePlanShard), nil, false},
		{"an orphan of another pair", "llama-plans-0", map[string]string{pdv1.LabelPDPair: "alpaca", pdv1.LabelRole: pdv1.RolePlanShard}, nil, false},
		{"a shard past the last", "llama-plans-32", labels(pdv1.RolePlanShard), nil, false},
		{"a shard number with a leading zero", "llama-plans-01", labels(pdv1.RolePlanShard), nil, false},
		{"a user's name", "llama-config", labels(pdv1.RolePlanShard), nil, false},
		{"a user's name, controlled by the pair", "llama-config", labels(pdv1.RolePlanShard), ref(pair), false},
		{"controlled by an earlier pair of that name", "llama-plans-0", labels(pdv1.RolePlanShard), ref(other), false},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: "ns", Labels: c.labels, OwnerReferences: c.owners}}
		if got := claimable(cm, pair); got != c.want {
			t.Errorf("%s (%s, labels %v): claimable %v, want %v", c.what, c.name, c.labels, got, c.want)
		}
	}
}
