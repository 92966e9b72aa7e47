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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// configMapMeta is a ConfigMap as the manager's cache holds it: metadata.
func configMapMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

// The manager's cache holds no managed fields and no kubectl
// last-applied annotation, of PDPairs or of plan ConfigMaps, while the API
// server holds both; the pair's other annotations stay.
func TestCacheHoldsWhatTheManagerReads(t *testing.T) {
	ns := newNamespace(t)
	pair := fixtures.GQAPair(ns, "cached", 8, 4, 4, 512)
	pair.Annotations = map[string]string{lastApplied: `{"spec":"` + strings.Repeat("x", 4096) + `"}`, "team": "kv"}
	create(t, pair)
	waitObserved(t, pair)
	ctx := context.Background()
	index := client.ObjectKey{Namespace: ns, Name: planstore.IndexConfigMapName(pair.Name)}
	for _, c := range []struct {
		key       client.ObjectKey
		onServer  client.Object
		inManager client.Object
	}{
		{client.ObjectKeyFromObject(pair), &pdv1.PDPair{}, &pdv1.PDPair{}},
		{index, &corev1.ConfigMap{}, configMapMeta()},
	} {
		if err := k8s.Get(ctx, c.key, c.onServer); err != nil {
			t.Fatal(err)
		}
		if len(c.onServer.GetManagedFields()) == 0 {
			t.Fatalf("%s: the API server keeps no managed fields; nothing to check", c.key)
		}
		testutil.Eventually(t, settle, fmt.Sprintf("the manager's cache holding %s", c.key), func() error {
			return managerCache.Get(ctx, c.key, c.inManager)
		})
		if mf := c.inManager.GetManagedFields(); len(mf) != 0 {
			t.Errorf("%s: the manager's cache holds %d managed fields entries", c.key, len(mf))
		}
		if _, ok := c.inManager.GetAnnotations()[lastApplied]; ok {
			t.Errorf("%s: the manager's cache holds kubectl's last-applied annotation", c.key)
		}
	}
	var cached pdv1.PDPair
	if err := managerCache.Get(ctx, client.ObjectKeyFromObject(pair), &cached); err != nil {
		t.Fatal(err)
	}
	if cached.Annotations["team"] != "kv" {
		t.Errorf("the pair's own annotations are gone from the cache: %v", cached.Annotations)
	}
}

// A namespace user can put the PDPair label on any ConfigMap. What the
// manager's cache keeps of one is bounded whatever the user wrote: no data
// (the watch is metadata only), only the operator's labels and annotations
// (values of a hash's length), no finalizers, the controller reference
// alone.
func TestCacheKeepsLittleOfALabelledConfigMap(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	refs := make([]metav1.OwnerReference, 40)
	for i := range refs {
		refs[i] = metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: fmt.Sprintf("s%d", i), UID: types.UID(fmt.Sprintf("u%d", i))}
	}
	refs[7].Controller = ptrTo(true)
	big := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant", OwnerReferences: refs,
			Finalizers: []string{"example.com/a", "example.com/b"},
			Labels:     map[string]string{pdv1.LabelPDPair: "any", pdv1.LabelRole: pdv1.RolePlanIndex, "team": "kv"},
			Annotations: map[string]string{"note": strings.Repeat("n", 200<<10),
				pdv1.AnnotationPlanHash: strings.Repeat("h", 4096), pdv1.AnnotationContentHash: strings.Repeat("c", 64)}},
		Data: map[string]string{"blob": strings.Repeat("x", 900<<10)},
	}
	create(t, big)
	got := configMapMeta()
	testutil.Eventually(t, settle, "the manager's cache holding the labelled ConfigMap", func() error {
		return managerCache.Get(ctx, client.ObjectKeyFromObject(big), got)
	})
	if want := map[string]string{pdv1.LabelPDPair: "any", pdv1.LabelRole: pdv1.RolePlanIndex}; !maps.Equal(got.Labels, want) {
		t.Errorf("cached labels %v, want %v", got.Labels, want)
	}
	if want := map[string]string{pdv1.AnnotationContentHash: strings.Repeat("c", 64)}; !maps.Equal(got.Annotations, want) {
		t.Errorf("cached annotations hold %d keys (%d bytes), want only the content hash", len(got.Annotations), annotationBytes(got.Annotations))
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Name != "s7" || len(got.Finalizers) != 0 || len(got.ManagedFields) != 0 {
		t.Errorf("cached %d owner references, finalizers %v, %d managed fields; want the controller s7 alone",
			len(got.OwnerReferences), got.Finalizers, len(got.ManagedFields))
	}
	if got.UID != big.UID || got.ResourceVersion == "" {
		t.Errorf("cached uid %q resourceVersion %q; want %q and one", got.UID, got.ResourceVersion, big.UID)
	}
}

func annotationBytes(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// After a restart the manager reads back the data of the plan ConfigMaps
// the pair controls (its UID in their controller reference), by name, and
// of no other: an orphan under a plan name that carries the pair's labels
// (which any namespace user can write) is adopted but never read back.
func TestReadBackReadsOnlyControlledConfigMaps(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	pair := fixtures.GQAPair(ns, "readback", 8, 4, 4, 512)
	create(t, pair)
	got := waitObserved(t, pair)
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: planstore.ShardConfigMapName(pair.Name, 30),
		Labels: map[string]string{pdv1.LabelPDPair: pair.Name, pdv1.LabelRole: pdv1.RolePlanShard}}, Data: map[string]string{"forged": "x"}}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1ConfigMapListGVK)
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	owned := map[string]*metav1.PartialObjectMetadata{}
	for i := range list.Items {
		if claimable(&list.Items[i], got) {
			owned[list.Items[i].Name] = &list.Items[i]
		}
	}
	create(t, orphan)
	orphanMeta := configMapMeta()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(orphan), orphanMeta); err != nil {
		t.Fatal(err)
	}
	if !claimable(orphanMeta, got) {
		t.Fatal("the orphan is not claimable; nothing to check")
	}
	owned[orphan.Name] = orphanMeta
	fresh := &PDPairReconciler{Client: k8s, APIReader: k8s, plans: newPlanCache()} // a manager just started
	full, err := fresh.controlledData(ctx, got, owned)
	if err != nil {
		t.Fatal(err)
	}
	index := planstore.IndexConfigMapName(pair.Name)
	if cm := full[index]; cm == nil || cm.Data[planstore.IndexKey] == "" {
		t.Fatalf("the pair's own index was not read back: %v", cm)
	}
	if _, ok := full[orphan.Name]; ok {
		t.Errorf("the orphan %s was read back as the pair's plans", orphan.Name)
	}
	if len(full) != len(owned)-1 {
		t.Errorf("read back %d ConfigMaps, want the %d the pair controls", len(full), len(owned)-1)
	}
}
