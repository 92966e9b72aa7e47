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
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Bounds from the hardening issue: config/manager's memory limit, and how
// soon an over-budget pair must be told.
const (
	managerMemoryLimit = 512 << 20
	refusedWithin      = 30 * time.Second
)

// geometry is a buffer group whose two sides share the unit.
func geometry(count int32, decodeItem, prefillItem, unit int64) pdv1.BufferGeometry {
	return pdv1.BufferGeometry{Count: count, DecodeItemBytes: decodeItem, PrefillItemBytes: ptr.To(prefillItem),
		DecodeUnitBytes: ptr.To(unit), PrefillUnitBytes: ptr.To(unit)}
}

// kvLayers is layers TargetK and TargetV buffers, in groups of at most 4096
// (the CRD's limit per group).
func kvLayers(layers int32, decodeItem, prefillItem, unit int64) []pdv1.KVBufferGroup {
	var groups []pdv1.KVBufferGroup
	for _, kind := range []pdv1.KVBufferKind{pdv1.KVTargetK, pdv1.KVTargetV} {
		for left := layers; left > 0; left -= 4096 {
			groups = append(groups, pdv1.KVBufferGroup{Kind: kind, BufferGeometry: geometry(min(left, 4096), decodeItem, prefillItem, unit)})
		}
	}
	return groups
}

func fleets(prefillTP, prefillDP, decodeTP, decodeDP int32) (pdv1.FleetLayout, pdv1.FleetLayout) {
	return pdv1.FleetLayout{TensorParallelSize: prefillTP, DataParallelSize: ptr.To(prefillDP)},
		pdv1.FleetLayout{TensorParallelSize: decodeTP, DataParallelSize: ptr.To(decodeDP)}
}

// overBudgetShapes are PDPairs within every limit of the CRD whose plans are
// far past the plan budget, one per way of getting there. The fragment
// counts are D + Q − gcd(D, Q) per buffer (see docs/plan-budget.md).
func overBudgetShapes() map[string]pdv1.PDPairSpec {
	shapes := map[string]pdv1.PDPairSpec{}
	// 4096 prefill ranks → 1 decode rank, 8192 buffers: 4096 fragments each.
	p, d := fleets(4096, 1, 1, 1)
	shapes["wide-prefill"] = pdv1.PDPairSpec{Prefill: p, Decode: d, KVBuffers: kvLayers(4096, 4096, 1, 1)}
	// 1 prefill rank → 4096 decode ranks, 8192 buffers: 4096 fragments each.
	p, d = fleets(1, 1, 4096, 1)
	shapes["wide-decode"] = pdv1.PDPairSpec{Prefill: p, Decode: d, KVBuffers: kvLayers(4096, 1, 4096, 1)}
	// P64 → D48 over every buffer allowed: 16384 KV and 16384 state
	// buffers of 96 fragments each, 3,145,728 in all.
	p, d = fleets(64, 1, 48, 1)
	many := pdv1.PDPairSpec{Prefill: p, Decode: d, KVBuffers: kvLayers(8192, 4, 3, 1)}
	for range 4 {
		many.StateBuffers = append(many.StateBuffers, pdv1.StateBufferGroup{BufferGeometry: geometry(4096, 4, 3, 1)})
	}
	shapes["many-buffers"] = many
	// DP attention: 2048 prefill ranks per DP group → 1 decode rank per DP
	// group, 8192 buffers: 2048 fragments each.
	p, d = fleets(4096, 2, 2, 2)
	shapes["dp-attention"] = pdv1.PDPairSpec{Prefill: p, Decode: d, KVBuffers: kvLayers(4096, 2048, 1, 1)}
	// MLA with the L1.5 cache: no fragments, but every one of 4096 decode
	// ranks targets every one of 4096 prefill ranks (16.7 million targets).
	p, d = fleets(4096, 1, 4096, 1)
	shapes["mla-l15-wide"] = pdv1.PDPairSpec{AttentionBackend: pdv1.AttentionMLA, MLAL15Cache: true, Prefill: p, Decode: d,
		KVBuffers: []pdv1.KVBufferGroup{{Kind: pdv1.KVTargetK, BufferGeometry: geometry(61, 576, 576, 576)}}}
	return shapes
}

// largestAdmitted is the largest layout the documentation promises:
// P512 → D1024 over 400 buffers, 409,600 fragments.
func largestAdmitted() pdv1.PDPairSpec {
	p, d := fleets(512, 1, 1024, 1)
	return pdv1.PDPairSpec{Prefill: p, Decode: d, KVBuffers: kvLayers(200, 128, 256, 64)}
}

// TestOverBudgetPairsDoNotTakeTheManagerDown applies over-budget PDPairs of
// every shape together with ordinary ones and the largest admitted pair, to
// the real manager binary: the over-budget ones are refused with PlanTooLarge
// within seconds, the others become Ready, the manager process is the same
// one throughout, and its peak RSS stays under config/manager's 512 MiB.
func TestOverBudgetPairsDoNotTakeTheManagerDown(t *testing.T) {
	env := testutil.StartForTest(t)
	k8s, kubeconfig := adminClient(t, env)
	mgr := testutil.StartManager(t, env.Root, kubeconfig)
	pid := mgr.Pid()
	createScaleNamespaces(t, k8s)

	var pairs []*pdv1.PDPair
	overBudget := map[string]bool{}
	for name, spec := range overBudgetShapes() {
		pairs = append(pairs, fixtures.Pair("scale-0", name).Spec(spec).Obj())
		overBudget[name] = true
	}
	pairs = append(pairs, fixtures.Pair("scale-1", "largest-admitted").Spec(largestAdmitted()).Obj())
	pairs = append(pairs, workload(layoutMix(t, env.Root), 20, namespaces)...)

	start := time.Now()
	createAll(t, k8s, pairs)
	refused := testutil.WaitPairs(t, k8s, refusedWithin, pick(pairs, func(p *pdv1.PDPair) bool { return overBudget[p.Name] }), pdv1.PDPairPlansPublished,
		metav1.ConditionFalse, pdv1.ReasonPlanTooLarge)
	ready := testutil.WaitPairs(t, k8s, 3*time.Minute, pick(pairs, func(p *pdv1.PDPair) bool { return !overBudget[p.Name] }), pdv1.PDPairReady,
		metav1.ConditionTrue, pdv1.ReasonReady)
	rss := peakRSS(t, mgr)
	t.Logf("%d over-budget pairs refused with PlanTooLarge after %s; %d others Ready after %s (the largest P512→D1024, 409,600 fragments); manager peak RSS %.1f MiB",
		len(overBudget), refused.Sub(start).Round(time.Millisecond), len(pairs)-len(overBudget), ready.Sub(start).Round(time.Millisecond), float64(rss)/(1<<20))

	for name := range overBudget {
		var cms []string
		if err := listPlanConfigMaps(k8s, "scale-0", name, &cms); err != nil {
			t.Fatal(err)
		}
		if len(cms) != 0 {
			t.Errorf("over-budget pair %s has plan ConfigMaps %v", name, cms)
		}
	}
	select {
	case <-mgr.Exited():
		t.Fatalf("the manager (pid %d) did not survive: %v", pid, mgr.ExitError())
	default:
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the manager (pid %d) did not survive: %v", pid, err)
	}
	testutil.WaitManagerReady(t, mgr)
	if rss >= managerMemoryLimit {
		t.Errorf("manager peak RSS %.1f MiB, limit %d MiB", float64(rss)/(1<<20), managerMemoryLimit>>20)
	}
}

// pick is the pairs keep accepts.
func pick(pairs []*pdv1.PDPair, keep func(*pdv1.PDPair) bool) []*pdv1.PDPair {
	var picked []*pdv1.PDPair
	for _, p := range pairs {
		if keep(p) {
			picked = append(picked, p)
		}
	}
	return picked
}

// listPlanConfigMaps names the plan ConfigMaps of a PDPair on the server.
func listPlanConfigMaps(c client.Client, namespace, pair string, names *[]string) error {
	var list corev1.ConfigMapList
	if err := c.List(context.Background(), &list, client.InNamespace(namespace), client.MatchingLabels{pdv1.LabelPDPair: pair}); err != nil {
		return err
	}
	for _, cm := range list.Items {
		*names = append(*names, cm.Name)
	}
	return nil
}
