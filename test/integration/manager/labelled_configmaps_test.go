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

package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Anyone who may create ConfigMaps in a namespace can put the PDPair label
// on as many ConfigMaps of 1 MiB as they like. The manager watches them
// (the label is how it finds its own plan ConfigMaps) as metadata only, so
// their data never reaches it: 50 labelled ConfigMaps of 900 KiB (43.9 MiB)
// grow its heap by at most labelledHeapBound, and the pair keeps
// publishing. With the data cached the heap grew by the whole 45 MiB and
// more. The controller runs in this process, as cmd/manager wires it, so
// that the heap after a GC is the manager's own.
const (
	labelledConfigMaps = 50
	labelledDataBytes  = 900 << 10
	labelledHeapBound  = 8 << 20
)

func TestLabelledConfigMapsDataIsNotCached(t *testing.T) {
	env := testutil.StartForTest(t)
	k8s, _ := adminClient(t, env)
	ctx := context.Background()
	mgr := startInProcessManager(t, env, 0)
	const ns = "tenant"
	testutil.CreateNamespaces(t, k8s, ns)
	pair := fixtures.GQAPair(ns, "kv", 8, 4, 4, 512)
	if err := k8s.Create(ctx, pair); err != nil {
		t.Fatal(err)
	}
	waitPublished(t, k8s, pair)
	payload := strings.Repeat("x", labelledDataBytes)
	before := heapAfterGC()

	start := time.Now()
	for i := range labelledConfigMaps {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("big-%d", i),
			Labels: map[string]string{pdv1.LabelPDPair: pair.Name, pdv1.LabelRole: pdv1.RolePlanShard}},
			Data: map[string]string{"blob": payload}}
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, time.Minute, "the manager's cache holding every labelled ConfigMap", func() error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		if err := mgr.GetCache().List(ctx, list, client.InNamespace(ns), client.MatchingLabels{pdv1.LabelPDPair: pair.Name}); err != nil {
			return err
		}
		if len(list.Items) < labelledConfigMaps {
			return fmt.Errorf("%d of %d cached", len(list.Items), labelledConfigMaps)
		}
		return nil
	})
	var got pdv1.PDPair
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pair), &got); err != nil {
		t.Fatal(err)
	}
	got.Spec.KVBuffers[0].Count, got.Spec.KVBuffers[1].Count = 8, 8
	if err := k8s.Update(ctx, &got); err != nil {
		t.Fatal(err)
	}
	waitPublished(t, k8s, &got)
	after := heapAfterGC()
	grew := int64(after) - int64(before)
	t.Logf("%d labelled ConfigMaps of %d KiB (%d MiB) cached and the pair republished in %s; heap after GC %.1f MiB → %.1f MiB (%+.1f MiB, bound %d MiB)",
		labelledConfigMaps, labelledDataBytes>>10, labelledConfigMaps*labelledDataBytes>>20, time.Since(start).Round(time.Millisecond),
		mib(before), mib(after), float64(grew)/(1<<20), labelledHeapBound>>20)
	if grew > labelledHeapBound {
		t.Errorf("the manager's heap grew %.1f MiB for %d labelled ConfigMaps, bound %d MiB", float64(grew)/(1<<20), labelledConfigMaps, labelledHeapBound>>20)
	}
	for i := range labelledConfigMaps {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("big-%d", i)}, &cm); err != nil || len(cm.OwnerReferences) != 0 {
			t.Fatalf("the user's ConfigMap big-%d was touched: %v %v", i, err, cm.OwnerReferences)
		}
	}
}

// waitPublished waits until the pair's current generation has published plans.
func waitPublished(t *testing.T, c client.Client, pair *pdv1.PDPair) {
	t.Helper()
	testutil.Eventually(t, time.Minute, "the pair's plans published", func() error {
		var got pdv1.PDPair
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(pair), &got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != got.Generation || got.Status.Plan == nil {
			return fmt.Errorf("generation %d observed %d, plan %v", got.Generation, got.Status.ObservedGeneration, got.Status.Plan)
		}
		return nil
	})
}
