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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// newNamespace creates a namespace of the test's own. Every integration test
// starts with it, so it is also where they skip without a control plane.
func newNamespace(t *testing.T) string {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return testutil.NewNamespace(t, k8s)
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

const settle = 20 * time.Second

// waitObserved waits until the PDPair's status describes its current
// generation and returns it.
func waitObserved(t *testing.T, p *pdv1.PDPair) *pdv1.PDPair {
	t.Helper()
	var got pdv1.PDPair
	testutil.Eventually(t, settle, "status of "+p.Name+" observes its generation", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairReady))
		if got.Status.ObservedGeneration != got.Generation || ready == nil || ready.ObservedGeneration != got.Generation {
			return fmt.Errorf("generation %d, observed %d", got.Generation, got.Status.ObservedGeneration)
		}
		return nil
	})
	return &got
}

// wantCondition checks one condition's status and reason.
func wantCondition(t *testing.T, p *pdv1.PDPair, condType pdv1.PDPairConditionType, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(p.Status.Conditions, string(condType))
	if c == nil {
		t.Fatalf("%s has no %s condition; conditions %+v", p.Name, condType, p.Status.Conditions)
	}
	if c.Status != status || c.Reason != string(reason) {
		t.Fatalf("%s: %s = %s/%s (%q), want %s/%s", p.Name, condType, c.Status, c.Reason, c.Message, status, reason)
	}
	if c.ObservedGeneration != p.Generation {
		t.Fatalf("%s: %s observedGeneration %d, object generation %d", p.Name, condType, c.ObservedGeneration, p.Generation)
	}
	return c
}

// planConfigMaps lists the plan ConfigMaps of a PDPair from the API server.
func planConfigMaps(t *testing.T, p *pdv1.PDPair) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	if err := k8s.List(context.Background(), &list, client.InNamespace(p.Namespace), client.MatchingLabels{pdv1.LabelPDPair: p.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func configMapNames(cms []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Name)
	}
	return out
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// gaugeValue reads pdtopo_pdpairs{compatible=value} from the registry.
func gaugeValue(t *testing.T, value string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "pdtopo_pdpairs" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == value {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// updateSpec re-reads the PDPair and applies mutate until the update is not in
// conflict: the manager may write status between a test's read and its write.
func updateSpec(t *testing.T, pair *pdv1.PDPair, mutate func(*pdv1.PDPair)) *pdv1.PDPair {
	t.Helper()
	var latest pdv1.PDPair
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), &latest); err != nil {
			return err
		}
		mutate(&latest)
		return k8s.Update(context.Background(), &latest)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &latest
}
