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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// shadowConfigMap is the ConfigMap of issue 19: no label, no owner, named
// like a shard the pair does not use, holding an index and a rank file.
func shadowConfigMap(ns, pair string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: planstore.ShardConfigMapName(pair, 31)},
		Data:       map[string]string{planstore.IndexKey: `{"formatVersion":1}`},
		BinaryData: map[string][]byte{planstore.RankKey(0): {0x1f, 0x8b}},
	}
}

func planNamesClear(t *testing.T, p *pdv1.PDPair) *metav1.Condition {
	t.Helper()
	var got pdv1.PDPair
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairPlanNamesClear))
}

// The next reconcile of a new generation after a ConfigMap of someone
// else's appears under a plan name names it in PlanNamesClear (the
// periodic scan is off in this suite; TestForeignScan runs it), with what the operator sees of it;
// user ConfigMaps under other names, labelled or not, are not named; once
// it is gone, the condition clears at the next reconcile. It is never
// written over, adopted or deleted.
func TestForeignPlanConfigMapIsNamed(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "named").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairPlanNamesClear, metav1.ConditionTrue, pdv1.ReasonNoForeignConfigMaps)

	shadow := shadowConfigMap(ns, "named")
	create(t, shadow)
	labelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "named-plans-7",
		Labels: map[string]string{pdv1.LabelPDPair: "named", pdv1.LabelRole: pdv1.RoleDecode}}, Data: map[string]string{"a": "b"}}
	create(t, labelled)
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "named-config",
		Labels: map[string]string{pdv1.LabelPDPair: "named"}}, Data: map[string]string{"a": "b"}})

	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 40, 40 })
	got = waitObserved(t, got)
	c := wantCondition(t, got, pdv1.PDPairPlanNamesClear, metav1.ConditionFalse, pdv1.ReasonForeignConfigMaps)
	for _, says := range []string{
		"2 ConfigMaps",
		`named-plans-31 (no controller, labels pd.pdtopo.dev/pdpair="" pd.pdtopo.dev/role=""`,
		`named-plans-7 (no controller, labels pd.pdtopo.dev/pdpair="named" pd.pdtopo.dev/role="decode" (the operator's carry pd.pdtopo.dev/pdpair="named" pd.pdtopo.dev/role="shard")`,
		"Agents load only the index the operator sealed",
	} {
		if !strings.Contains(c.Message, says) {
			t.Errorf("PlanNamesClear message %q does not say %q", c.Message, says)
		}
	}
	if strings.Contains(c.Message, "named-config") {
		t.Errorf("PlanNamesClear names a ConfigMap outside the plan names: %q", c.Message)
	}
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	var after corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(shadow), &after); err != nil || len(after.OwnerReferences) != 0 || after.Data[planstore.IndexKey] != shadow.Data[planstore.IndexKey] {
		t.Fatalf("the foreign ConfigMap was touched: %v %+v", err, after.ObjectMeta)
	}

	for _, cm := range []*corev1.ConfigMap{shadow, labelled} {
		if err := k8s.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 80, 80 })
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairPlanNamesClear, metav1.ConditionTrue, pdv1.ReasonNoForeignConfigMaps)
}

// Without any other change, the scan finds a ConfigMap of someone else's
// appearing under a plan name and enqueues the pair, whose reconcile then
// names it; a scan that finds what the status already says enqueues
// nothing. The scan here is run by hand against the real API server, with
// the manager's own reports.
func TestForeignScan(t *testing.T) {
	if DefaultForeignScanInterval > 2*time.Minute {
		t.Fatalf("the scan runs every %s; a foreign ConfigMap must be named within 2 minutes", DefaultForeignScanInterval)
	}
	ctx := context.Background()
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "scanned").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	r := reconciles.inner.(*PDPairReconciler)
	events := make(chan event.GenericEvent, 100)
	scan := &foreignScan{r: r, interval: time.Hour, events: events}
	enqueued := func() []string {
		t.Helper()
		for len(events) > 0 {
			<-events
		}
		scan.scan(ctx)
		var names []string
		for len(events) > 0 {
			e := <-events
			if e.Object.GetNamespace() == ns {
				names = append(names, e.Object.GetName())
			}
		}
		return names
	}
	if n := enqueued(); len(n) != 0 {
		t.Fatalf("a scan with nothing new enqueued %v", n)
	}
	create(t, shadowConfigMap(ns, "scanned"))
	if n := enqueued(); len(n) != 1 || n[0] != "scanned" {
		t.Fatalf("after the shadow appeared the scan enqueued %v, want the pair", n)
	}
	// the manager's own reconcile, as the enqueued event would run it
	if _, err := reconciles.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(got)}); err != nil {
		t.Fatal(err)
	}
	if c := planNamesClear(t, got); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "scanned-plans-31") {
		t.Fatalf("PlanNamesClear after the reconcile: %+v", c)
	}
	if n := enqueued(); len(n) != 0 {
		t.Fatalf("a scan after the pair reported the shadow enqueued %v", n)
	}
}
