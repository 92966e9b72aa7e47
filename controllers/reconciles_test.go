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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// A new PDPair is reconciled once: the status write and the ConfigMaps the
// reconcile creates do not bring it back. A spec change costs one more (plus
// at most one for the stale shards it deletes). Nothing loops.
func TestReconcilesPerObject(t *testing.T) {
	t.Parallel() // slow and independent: overlaps with the other slow tests
	ns := newNamespace(t)
	compatible, incompatible := fixtures.Pair(ns, "counted").Spec(fixtures.Llama70B(8, 4)).Obj(), fixtures.Pair(ns, "counted-bad").Prefill(8, 1).Decode(4, 1).KVPair(2, 500, 256, 256).Obj()
	create(t, compatible)
	create(t, incompatible)
	waitObserved(t, compatible)
	waitObserved(t, incompatible)
	for _, p := range []*pdv1.PDPair{compatible, incompatible} {
		if n := settledReconciles(t, p); n != 1 {
			t.Errorf("%s was reconciled %d times after creation, want 1", p.Name, n)
		}
	}

	got := updateSpec(t, compatible, func(p *pdv1.PDPair) {
		p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 81, 81
	})
	waitObserved(t, got)
	if n := settledReconciles(t, compatible); n != 2 {
		t.Errorf("%s was reconciled %d times after one spec change, want 2", compatible.Name, n)
	}
}

// quietWindow is how long no reconcile of an object must run, once every
// event that could trigger one has reached the manager's informers, before
// its count is taken as final. An informer hands a stored event to the
// controller's handler at once and the queue starts a first-time item
// without delay: milliseconds, some tens on a loaded 2-core machine. Two
// seconds is a wide margin, and a reconcile loop shows within it.
const quietWindow = 2 * time.Second

// settledReconciles waits until nothing can still trigger a reconcile of p
// and returns how many it had. First the manager's cache must hold p and
// each of its plan ConfigMaps at the resourceVersion the API server holds:
// then the watch events of every write the reconciles made have arrived.
// Then no reconcile of p may run for quietWindow.
func settledReconciles(t *testing.T, p *pdv1.PDPair) int {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKeyFromObject(p)
	testutil.Eventually(t, settle, "the manager's cache holds what the API server holds for "+p.Name, func() error {
		var server, cached pdv1.PDPair
		if err := k8s.Get(ctx, key, &server); err != nil {
			return err
		}
		if err := managerCache.Get(ctx, key, &cached); err != nil || cached.ResourceVersion != server.ResourceVersion {
			return errorf("PDPair at resourceVersion %s in the cache, %s on the server (%v)", cached.ResourceVersion, server.ResourceVersion, err)
		}
		var onServer, inCache corev1.ConfigMapList
		sel := client.MatchingLabels{pdv1.LabelPDPair: p.Name}
		if err := k8s.List(ctx, &onServer, client.InNamespace(p.Namespace), sel); err != nil {
			return err
		}
		if err := managerCache.List(ctx, &inCache, client.InNamespace(p.Namespace), sel); err != nil {
			return err
		}
		versions := func(l corev1.ConfigMapList) string {
			var out []string
			for _, cm := range l.Items {
				out = append(out, cm.Name+"@"+cm.ResourceVersion)
			}
			slices.Sort(out)
			return strings.Join(out, " ")
		}
		if a, b := versions(onServer), versions(inCache); a != b {
			return errorf("ConfigMaps %s on the server, %s in the cache", a, b)
		}
		return nil
	})
	testutil.Eventually(t, settle, "no reconcile of "+p.Name+" for "+quietWindow.String(), func() error {
		if idle := reconciles.idleFor(key); idle < quietWindow {
			return errorf("idle for %v", idle)
		}
		return nil
	})
	return reconciles.of(key)
}

// The manager's metrics endpoint carries the gauge of PDPairs by
// compatibility and the histogram of published plan bytes.
func TestMetrics(t *testing.T) {
	ns := newNamespace(t)
	good, bad := fixtures.Pair(ns, "m-good").Spec(fixtures.Llama70B(8, 4)).Obj(), fixtures.Pair(ns, "m-bad").Prefill(8, 1).Decode(4, 1).KVPair(2, 500, 256, 256).Obj()
	create(t, good)
	create(t, bad)
	waitObserved(t, good)
	waitObserved(t, bad)
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var compatibleN, incompatibleN float64
	var histogramN uint64
	for _, f := range families {
		switch f.GetName() {
		case "pdtopo_pdpairs":
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == "true" {
					compatibleN = m.GetGauge().GetValue()
				} else {
					incompatibleN = m.GetGauge().GetValue()
				}
			}
		case "pdtopo_published_plan_bytes":
			histogramN = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if compatibleN < 1 || incompatibleN < 1 || histogramN < 1 {
		t.Fatalf("pdtopo_pdpairs{compatible=true}=%v {false}=%v, pdtopo_published_plan_bytes count %d; want each ≥ 1",
			compatibleN, incompatibleN, histogramN)
	}
	if err := k8s.Delete(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the gauge forgets a deleted PDPair", func() error {
		if v := gaugeValue(t, "false"); v != incompatibleN-1 {
			return errorf("pdtopo_pdpairs{compatible=false} = %v, want %v", v, incompatibleN-1)
		}
		return nil
	})
}
