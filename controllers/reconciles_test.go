package controllers

import (
	"context"
	"testing"
	"time"

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
	compatible, incompatible := gqaP8D4(ns, "counted").obj(), newPair(ns, "counted-bad").prefill(8, 1).decode(4, 1).kvPair(2, 500, 256, 256).obj()
	create(t, compatible)
	create(t, incompatible)
	waitObserved(t, compatible)
	waitObserved(t, incompatible)
	time.Sleep(2 * time.Second) // anything a write would trigger has arrived by now
	for _, p := range []*pdv1.PDPair{compatible, incompatible} {
		if n := reconciles.of(client.ObjectKeyFromObject(p)); n != 1 {
			t.Errorf("%s was reconciled %d times after creation, want 1", p.Name, n)
		}
	}

	got := updateSpec(t, compatible, func(p *pdv1.PDPair) {
		p.Spec.KVBuffers[0].Count, p.Spec.KVBuffers[1].Count = 81, 81
	})
	waitObserved(t, got)
	time.Sleep(2 * time.Second)
	if n := reconciles.of(client.ObjectKeyFromObject(compatible)); n != 2 {
		t.Errorf("%s was reconciled %d times after one spec change, want 2", compatible.Name, n)
	}
}

// The manager's metrics endpoint carries the gauge of PDPairs by
// compatibility and the histogram of published plan bytes.
func TestMetrics(t *testing.T) {
	ns := newNamespace(t)
	good, bad := gqaP8D4(ns, "m-good").obj(), newPair(ns, "m-bad").prefill(8, 1).decode(4, 1).kvPair(2, 500, 256, 256).obj()
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
	eventually(t, settle, "the gauge forgets a deleted PDPair", func() error {
		if v := gaugeValue(t, "false"); v != incompatibleN-1 {
			return errorf("pdtopo_pdpairs{compatible=false} = %v, want %v", v, incompatibleN-1)
		}
		return nil
	})
}
