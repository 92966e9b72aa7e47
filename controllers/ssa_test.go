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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// Plan ConfigMaps are written by server-side apply under the manager's field
// owner, so what others add to their labels survives a republication.
func TestConfigMapsAreServerSideApplied(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "applied").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	cms := planConfigMaps(t, got)
	if len(cms) == 0 {
		t.Fatal("no plan ConfigMaps")
	}
	for _, cm := range cms {
		applied := false
		for _, mf := range cm.ManagedFields {
			if mf.Manager == pdv1.ManagerName && mf.Operation == metav1.ManagedFieldsOperationApply {
				applied = true
			}
		}
		if !applied {
			t.Errorf("%s is not server-side applied by %q: %+v", cm.Name, pdv1.ManagerName, cm.ManagedFields)
		}
	}
	// Someone labels the index; a spec change republishes every ConfigMap.
	index := cms[0].DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(index), index); err != nil {
			return err
		}
		index.Labels["team"] = "serving"
		return k8s.Update(context.Background(), index)
	})
	if err != nil {
		t.Fatal(err)
	}
	hash := got.Status.Plan.Hash
	got = waitObserved(t, updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 40, 40 }))
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if got.Status.Plan.Hash == hash {
		t.Fatal("the spec change did not republish")
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(index), index); err != nil {
		t.Fatal(err)
	}
	if index.Labels["team"] != "serving" || index.Annotations[pdv1.AnnotationPlanHash] != got.Status.Plan.Hash {
		t.Fatalf("after republishing: labels %v, plan hash %s (want %s)", index.Labels, index.Annotations[pdv1.AnnotationPlanHash], got.Status.Plan.Hash)
	}
}
