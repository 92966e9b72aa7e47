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
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// listCounter is the API server, counting list requests and the most
// ConfigMaps one of them returned.
type listCounter struct {
	client.Reader
	mu    sync.Mutex
	lists int
	most  int
}

func (c *listCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := c.Reader.List(ctx, list, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists++
	if l, ok := list.(*metav1.PartialObjectMetadataList); ok {
		c.most = max(c.most, len(l.Items))
	}
	return err
}

func (c *listCounter) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.most
}

// A reconcile does not list the pair's namespace each time (agents are
// rechecked every few seconds): only for a new generation, when its plans
// ran into someone else's ConfigMap, or once the last look is older than
// the scan interval. A list comes a page at a time, so a namespace of
// many ConfigMaps is never held at once, and a foreign ConfigMap on a
// later page is still named.
func TestForeignLooksAreReusedAndPaged(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for i := range listPage + 10 { // sorted before the pair's plan names
		create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("a-%03d", i)}})
	}
	create(t, shadowConfigMap(ns, "looked"))
	pair := fixtures.Pair(ns, "looked").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, pair)
	got := waitObserved(t, pair)
	counter := &listCounter{Reader: k8s}
	r := &PDPairReconciler{APIReader: counter, ForeignScanInterval: time.Hour, looks: newForeignLooks()}

	first := r.observeForeign(ctx, got, false)
	if !first.listed || foreignNames(first.objects) != "looked-plans-31" {
		t.Fatalf("first look: listed %v, found %q; want the shadow past the first page", first.listed, foreignNames(first.objects))
	}
	lists, most := r.listsAfter(ctx, counter, got, false)
	if want := 2; lists != want || most > listPage {
		t.Fatalf("%d list requests (at most %d ConfigMaps each) for a look and a reuse; want %d pages of at most %d", lists, most, want, listPage)
	}
	if lists, _ = r.listsAfter(ctx, counter, got, true); lists != 4 {
		t.Errorf("after a forced look %d list requests, want 4", lists)
	}
	next := got.DeepCopy()
	next.Generation++
	if lists, _ = r.listsAfter(ctx, counter, next, false); lists != 6 {
		t.Errorf("after a new generation %d list requests, want 6", lists)
	}
	r.ForeignScanInterval = time.Nanosecond
	if lists, _ = r.listsAfter(ctx, counter, next, false); lists != 8 {
		t.Errorf("after the scan interval %d list requests, want 8", lists)
	}
}

// listsAfter looks once more and returns the counts then.
func (r *PDPairReconciler) listsAfter(ctx context.Context, c *listCounter, pair *pdv1.PDPair, force bool) (int, int) {
	r.observeForeign(ctx, pair, force)
	return c.counts()
}
