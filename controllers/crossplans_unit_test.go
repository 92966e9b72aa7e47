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
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// The count of sets never leaves out a layout pair a PDPair can serve:
// every generation and every cross pair of the older ones with the current.
func TestMaxPlanSetsHoldsEveryServedPair(t *testing.T) {
	if n := pdv1.MaxPlanGenerations + 2*(pdv1.MaxPlanGenerations-1); planstore.MaxPlanSets < n {
		t.Fatalf("planstore.MaxPlanSets is %d; %d generations and their cross pairs make %d", planstore.MaxPlanSets, pdv1.MaxPlanGenerations, n)
	}
}

// Sets that do not fit the shard budget are left out, those whose
// instances serve now last of all, and PlansPublished names them by their
// layouts. Here every decode rank of the two older sets takes a shard of
// its own (32 each, of 32 names): one fits beside the current set (P16).
// The P32 prefills still run (prefillInstances), the P8 ones were not seen
// lately: the P8×D16 set is the one left out, though published before.
func TestSetsPastTheBudgetLeaveOutTheUnusedFirst(t *testing.T) {
	at := func(p int32) *pdv1.PDPair {
		x := fixtures.Pair("ns", "big").Spec(fixtures.Llama70B(p, 32)).Obj()
		x.UID = "uid-1"
		return x
	}
	cur, idle, busy := planPair(at(16), transferplan.DefaultBudget), planPair(at(8), transferplan.DefaultBudget), planPair(at(32), transferplan.DefaultBudget)
	for _, o := range []*planOutcome{cur, idle, busy} {
		if o.objects == nil {
			t.Fatalf("not planned: %s", o.layoutMessage)
		}
	}
	pair := at(16)
	gen := func(p int32, hash string, prefillInstances int32) pdv1.PlanGeneration {
		return pdv1.PlanGeneration{Prefill: pdv1.FleetLayout{TensorParallelSize: p, DataParallelSize: ptr.To[int32](1)},
			Decode: pair.Spec.Decode, PlanHash: hash, PrefillInstances: prefillInstances, Current: hash == cur.hash}
	}
	pair.Status.Generations = []pdv1.PlanGeneration{gen(16, cur.hash, 0), gen(8, idle.hash, 0), gen(32, busy.hash, 3)}
	r := &PDPairReconciler{plans: newPlanCache(), Budget: transferplan.DefaultBudget}
	r.plans.published.put(types.NamespacedName{Namespace: "ns", Name: "big"}, "uid-1", []planstore.SplitSet{
		splitSet(t, cur.objects), splitSet(t, inflate(idle.objects, 500<<10)), splitSet(t, inflate(busy.objects, 500<<10)),
	})
	pub, err := r.publishedSets(context.Background(), pair, cur, nil, modelConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pub.Published, []string{cur.hash, busy.hash}) || !slices.Equal(pub.Dropped, []string{idle.hash}) {
		t.Fatalf("published %v, dropped %v; want the current and P32 sets, P8 left out", pub.Published, pub.Dropped)
	}
	if msg := describeSets(pub); !strings.Contains(msg, "1 sets left out, past 10 sets or the shard budget: prefill TP 8 × decode TP 32 ("+short(idle.hash)+")") {
		t.Fatalf("PlansPublished's message does not name the set left out: %s", msg)
	}
}

// The cross pairs' plans are cached: a reconcile with nothing changed
// (every fleet probe causes one) publishes the same plans unplanned.
func TestCrossPlansCached(t *testing.T) {
	at := func(p, d int32) *pdv1.PDPair {
		x := fixtures.Pair("ns", "roll").Spec(fixtures.Llama70B(p, d)).Obj()
		x.UID = "uid-1"
		return x
	}
	cur, p4d4, p8d4 := planPair(at(4, 2), transferplan.DefaultBudget), planPair(at(4, 4), transferplan.DefaultBudget), planPair(at(8, 4), transferplan.DefaultBudget)
	pair := at(4, 2)
	for _, g := range []*pdv1.PDPair{at(4, 4), at(8, 4)} {
		hash := map[int32]string{4: p4d4.hash, 8: p8d4.hash}[g.Spec.Prefill.TensorParallelSize]
		pair.Status.Generations = append(pair.Status.Generations, pdv1.PlanGeneration{Prefill: g.Spec.Prefill, Decode: g.Spec.Decode, PlanHash: hash})
	}
	r := &PDPairReconciler{plans: newPlanCache(), Budget: transferplan.DefaultBudget}
	r.plans.published.put(types.NamespacedName{Namespace: "ns", Name: "roll"}, "uid-1", []planstore.SplitSet{splitSet(t, p4d4.objects), splitSet(t, p8d4.objects)})
	first, err := r.publishedSets(context.Background(), pair, cur, nil, modelConfig{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.publishedSets(context.Background(), pair, cur, nil, modelConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.crosses) != 1 || !first.crosses[0].published() || len(first.Published) != 4 {
		t.Fatalf("crosses %+v, published %v: want the (P8, D2) pair planned beside three sets", first.crosses, first.Published)
	}
	if again.crosses[0].out != first.crosses[0].out {
		t.Fatal("the cross pair was planned again with nothing changed")
	}
	if !bytes.Equal(mustJSON(t, again.Objects), mustJSON(t, first.Objects)) {
		t.Fatal("the same inputs published other objects")
	}
	// the packing of the sets is kept too, and made again for other sets
	if !sameMap(again.Objects[0].Data, first.Objects[0].Data) {
		t.Fatal("the same sets were packed again with nothing changed")
	}
	key := types.NamespacedName{Namespace: "ns", Name: "roll"}
	fewer, err := r.encodeSets(key, pair, splitSet(t, cur.objects), []planstore.SplitSet{splitSet(t, p4d4.objects)})
	if err != nil {
		t.Fatal(err)
	}
	if sameMap(fewer.Objects[0].Data, first.Objects[0].Data) || !slices.Equal(fewer.Published, []string{cur.hash, p4d4.hash}) {
		t.Fatalf("two sets answered from the packing of four: published %v", fewer.Published)
	}
}

// sameMap reports whether a and b are one map, not two equal ones.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func splitSet(t *testing.T, objs []planstore.Object) planstore.SplitSet {
	t.Helper()
	idx, err := planstore.LoadIndex(objs[:1])
	if err != nil {
		t.Fatal(err)
	}
	return planstore.SplitSet{PlanHash: idx.PlanHash, Layout: idx.Layout, Objects: objs}
}

// inflate replaces every rank's bytes by n bytes: the encoder of sets
// trusts its input's bytes, only their sizes matter to the packing.
func inflate(objs []planstore.Object, n int) []planstore.Object {
	out := []planstore.Object{objs[0]}
	for _, o := range objs[1:] {
		big := planstore.Object{Name: o.Name, BinaryData: map[string][]byte{}}
		for k := range o.BinaryData {
			big.BinaryData[k] = bytes.Repeat([]byte{byte(len(k))}, n)
		}
		out = append(out, big)
	}
	return out
}

// What RolloutCompatible and PlansPublished say of each kind of cross
// pair, from the publisher's planning: a contract pair's is neither
// planned nor judged, a kvBuffers pair's without a set to take a side's
// sizes from is not planned, and a refused one is named with its reason.
func TestCrossPairVerdicts(t *testing.T) {
	at := func(p, d int32) *pdv1.PDPair {
		x := fixtures.Pair("ns", "v").Spec(fixtures.Llama70B(p, d)).Obj()
		x.UID = "uid-1"
		return x
	}
	withGens := func(pair *pdv1.PDPair, gens ...*pdv1.PDPair) *pdv1.PDPair {
		for _, g := range gens {
			pair.Status.Generations = append(pair.Status.Generations, pdv1.PlanGeneration{Prefill: g.Spec.Prefill, Decode: g.Spec.Decode, PlanHash: "h" + parallelismOf(g.Spec.Prefill).String()})
		}
		return pair
	}
	contract := withGens(at(4, 2), at(4, 4), at(8, 4))
	contract.Spec.Wire = pdv1.WireCacheContract
	cases := []struct {
		name      string
		pair      *pdv1.PDPair
		sources   []*pdv1.PDPair
		published string // PlansPublished's part
		rollout   string // RolloutCompatible's part
		refused   bool
	}{
		{name: "contract wire", pair: contract,
			published: "cross pair prefill tp=8,dp=1 × decode tp=2,dp=1 not planned: the cache contracts of older layouts are not read",
			rollout:   "prefill tp=8,dp=1 × decode tp=2,dp=1 (not judged, not planned: the cache contracts of older layouts are not read)"},
		{name: "no set of the prefill layout", pair: withGens(at(4, 2), at(4, 4), at(8, 4)), sources: []*pdv1.PDPair{at(4, 2)},
			published: "not planned: no set is published for prefill layout tp=8,dp=1 to take its item sizes from",
			rollout:   "prefill tp=8,dp=1 × decode tp=2,dp=1 (not judged: not planned: no set is published for prefill layout tp=8,dp=1"},
		{name: "composed and planned", pair: withGens(at(4, 2), at(4, 4), at(8, 4)), sources: []*pdv1.PDPair{at(4, 2), at(8, 4)},
			rollout: "prefill tp=8,dp=1 × decode tp=2,dp=1 (planned and published)"},
		{name: "the generations' caches differ", pair: withGens(at(4, 2), at(4, 4), at(8, 4)), sources: []*pdv1.PDPair{at(4, 2), fixtures.Pair("ns", "v").Spec(fixtures.Llama70B(8, 4)).Edit(func(p *pdv1.PDPair) {
			for i := range p.Spec.KVBuffers {
				p.Spec.KVBuffers[i].Count = 40 // another model: half the layers
			}
		}).Obj()},
			published: "cross pair prefill tp=8,dp=1 × decode tp=2,dp=1 not published: InvalidLayout: the set of prefill TP 8 DP 1 has KV buffers 80 (40 target_k, 40 target_v)",
			rollout:   "prefill tp=8,dp=1 × decode tp=2,dp=1: InvalidLayout: the set of prefill TP 8 DP 1 has KV buffers 80 (40 target_k, 40 target_v), the set of decode TP 2 DP 1 has 160", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &PDPairReconciler{plans: newPlanCache(), Budget: transferplan.DefaultBudget}
			var sources []planstore.SplitSet
			for _, s := range tc.sources {
				out := planPair(s, transferplan.DefaultBudget)
				if out.objects == nil {
					t.Fatalf("source %s not planned: %s", parallelismOf(s.Spec.Prefill), out.layoutMessage)
				}
				sources = append(sources, splitSet(t, out.objects))
			}
			crosses, err := r.planCrosses(context.Background(), tc.pair, modelConfig{}, sources)
			if err != nil || len(crosses) != 1 {
				t.Fatalf("%d cross pairs, %v; want (P8, D2) alone", len(crosses), err)
			}
			if msg := describeSets(setsPublication{crosses: crosses}); !strings.Contains(msg, tc.published) || (tc.published == "") != (msg == "") {
				t.Errorf("PlansPublished says %q, want %q", msg, tc.published)
			}
			gens := append([]pdv1.PlanGeneration{{Prefill: tc.pair.Spec.Prefill, Decode: tc.pair.Spec.Decode, Current: true}}, tc.pair.Status.Generations...)
			v := judgeCrossPairs(tc.pair, gens, modelConfig{}, crosses)
			if !strings.Contains(v.message, tc.rollout) || v.compatible == tc.refused {
				t.Errorf("RolloutCompatible %t: %s; want %q", v.compatible, v.message, tc.rollout)
			}
		})
	}
}

// An agent of an older decode layout reports the first set of its layout,
// which may be a cross pair's (P8×D4 → P8×D2 → P4×D2: a D4 agent holds
// P8×D4's set and the cross pair P4×D4's): running either, it is not
// stale. A cross pair of the spec's decode layout is the current
// layout's, whose agents run the current set.
func TestServedPlanHashesIncludeCrossPairs(t *testing.T) {
	fl := func(tp int32) pdv1.FleetLayout {
		return pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: ptr.To[int32](1)}
	}
	published := func(p, d int32, hash string) crossPlan {
		return crossPlan{pair: LayoutPair{fl(p), fl(d)}, out: &planOutcome{compatible: true, hash: hash, objects: []planstore.Object{{Name: "x"}}}}
	}
	pair := &pdv1.PDPair{Spec: pdv1.PDPairSpec{Prefill: fl(4), Decode: fl(2)}}
	pair.Status.Generations = []pdv1.PlanGeneration{{Prefill: fl(8), Decode: fl(2), PlanHash: "h82", Current: true}, {Prefill: fl(8), Decode: fl(4), PlanHash: "h84"}}
	refused := crossPlan{pair: LayoutPair{fl(2), fl(4)}, out: &planOutcome{hash: "r"}}
	got := servedPlanHashes(pair, []crossPlan{published(4, 4, "x44"), published(8, 2, "x82"), refused})
	want := map[string]string{"h84": "tp=4,dp=1", "x44": "tp=4,dp=1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("served plan hashes %v, want %v", got, want)
	}
}
