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
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

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
		{index, &corev1.ConfigMap{}, &corev1.ConfigMap{}},
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
