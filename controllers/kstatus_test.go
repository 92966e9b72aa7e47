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
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"

	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// kstatusOf reads the PDPair from the API server and computes its status as
// Flux, Argo CD and kpt do, with the kstatus library.
func kstatusOf(t *testing.T, p *pdv1.PDPair) *status.Result {
	t.Helper()
	var got pdv1.PDPair
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
		t.Fatal(err)
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&got)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: raw})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// GitOps tools must see a broken pair as failed and a Ready pair as current.
func TestKStatus(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name string
		pair *pdv1.PDPair
		want status.Status
		// stalledReason is the reason kstatus reports for a Failed pair.
		stalledReason string
	}{
		{"ready", fixtures.Pair(ns, "ready").Spec(fixtures.Llama70B(8, 4)).Obj(), status.CurrentStatus, ""},
		{"incompatible", fixtures.Pair(ns, "fp8").Spec(fixtures.Llama70B(8, 4)).Edit(func(p *pdv1.PDPair) {
			p.Spec.KVBuffers[0].PrefillUnitBytes = ptr.To[int64](128)
			p.Spec.KVBuffers[1].PrefillUnitBytes = ptr.To[int64](128)
		}).Obj(), status.FailedStatus, "UnitSizeMismatch"},
		{"over budget", hostilePair(ns, "hostile"), status.FailedStatus, string(pdv1.ReasonPlanTooLarge)},
		// Engines that load no plans are Ready on the verdict alone.
		{"sglang compatible", enginePair(ns, "sglang", sglangEngine).Obj(), status.CurrentStatus, ""},
		{"vllm compatible", enginePair(ns, "vllm", vllmEngine).Obj(), status.CurrentStatus, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			create(t, c.pair)
			waitObserved(t, c.pair)
			res := kstatusOf(t, c.pair)
			if res.Status != c.want {
				t.Fatalf("kstatus %s (%s), want %s", res.Status, res.Message, c.want)
			}
			if c.stalledReason == "" {
				return
			}
			if len(res.Conditions) != 1 || res.Conditions[0].Type != status.ConditionStalled || res.Conditions[0].Reason != c.stalledReason {
				t.Fatalf("kstatus conditions %+v, want Stalled/%s", res.Conditions, c.stalledReason)
			}
		})
	}
}

// While a transient publish failure is retried the pair is Reconciling
// (kstatus InProgress), not Stalled; once the API accepts the writes it is
// Current and both conditions are gone.
func TestKStatusWhileRetrying(t *testing.T) {
	ns := newNamespace(t)
	unblock := denyConfigMaps(t, ns)
	p := fixtures.Pair(ns, "blocked").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReconciling, metav1.ConditionTrue, pdv1.ReasonPublishFailed)
	if res := kstatusOf(t, p); res.Status != status.InProgressStatus {
		t.Fatalf("kstatus %s (%s) while publishing is retried, want InProgress", res.Status, res.Message)
	}
	unblock()
	testutil.Eventually(t, settle*2, "the pair becomes Current", func() error {
		if res := kstatusOf(t, p); res.Status != status.CurrentStatus {
			return errorf("kstatus %s (%s)", res.Status, res.Message)
		}
		return nil
	})
	got = waitObserved(t, p)
	for _, cond := range []pdv1.PDPairConditionType{pdv1.PDPairReconciling, pdv1.PDPairStalled} {
		for _, c := range got.Status.Conditions {
			if c.Type == string(cond) {
				t.Fatalf("%s stays on a Ready pair: %+v", cond, c)
			}
		}
	}
}

// A status someone else wiped (a restore, a GitOps prune, a status patch)
// is written again at once, not at the next spec change; and the manager's
// own status writes do not reconcile the pair again.
func TestWipedStatusIsRewritten(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "wiped").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	got.Status = pdv1.PDPairStatus{}
	if err := k8s.Status().Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the wiped status is rewritten", func() error {
		var now pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &now); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(now.Status.Conditions, string(pdv1.PDPairReady)); c == nil || c.Status != metav1.ConditionTrue || now.Status.Plan == nil {
			return errorf("status %+v", now.Status)
		}
		return nil
	})
}
