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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Both roles change in one rollout: P8×D4, then prefill TP 4 while P8
// prefills still run (P8×D4 kept), then decode TP 2 (P4×D2 current). A new
// D2 decode now meets an old P8 prefill: the pair (P8, D2) was never any
// generation's, and is planned and published as a cross pair, for a pair
// that gives its kvBuffers (composed from the P8×D4 and P4×D2 sets) and
// for one described by its model (its own spec planned). The expectation
// is the P8×D2 spec the test writes, planned by the planner directly.
func TestCrossPairPlannedAndPublished(t *testing.T) {
	ns := newNamespace(t)
	model := func(p, d int32) *pdv1.PDPair {
		return fixtures.Pair(ns, "model").Prefill(p, 1).Decode(d, 1).InlineModel(llamaConfig, "bfloat16").Obj()
	}
	cases := []struct {
		name string
		at   func(p, d int32) *pdv1.PDPair
	}{
		{"kvBuffers", func(p, d int32) *pdv1.PDPair {
			return fixtures.Pair(ns, "explicit").Spec(fixtures.Llama70B(p, d)).Obj()
		}},
		{"model", model},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.at(8, 4)
			create(t, p)
			p = waitObserved(t, p)
			p = waitObserved(t, updateSpec(t, p, func(q *pdv1.PDPair) { q.Spec = tc.at(4, 4).Spec }))
			waitGenerations(t, p, []genView{{4, 4, true, 0, 0, 0}, {8, 4, false, 0, 0, 0}}, metav1.ConditionTrue, pdv1.ReasonGenerationsCompatible)
			p = waitObserved(t, updateSpec(t, p, func(q *pdv1.PDPair) { q.Spec = tc.at(4, 2).Spec }))
			p = waitGenerations(t, p, []genView{{4, 2, true, 0, 0, 0}, {4, 4, false, 0, 0, 0}, {8, 4, false, 0, 0, 0}},
				metav1.ConditionTrue, pdv1.ReasonGenerationsCompatible, "prefill tp=8,dp=1 × decode tp=2,dp=1 (planned and published)")

			want := plannedJSON(t, tc.at(8, 2))
			set := testutil.EventuallyValue(t, settle, "the (P8, D2) set published", func() (*planstore.SplitSet, error) {
				return layoutSet(planObjects(t, p), 8, 2)
			})
			if set.PlanHash == p.Status.Plan.Hash {
				t.Fatal("the cross pair's set is the current one")
			}
			got, err := planstore.LoadPlanSet(set.Objects)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(got); !bytes.Equal(b, want) {
				t.Fatalf("the (P8, D2) set differs from the plans of the P8×D2 spec:\n got %.300s\nwant %.300s", b, want)
			}
			// the current set is still index.json's, and status.plan.hash's
			if cur := publishedSet(t, p); !bytes.Equal(mustJSON(t, cur), plannedJSON(t, tc.at(4, 2))) {
				t.Fatal("index.json does not hold the current spec's plans")
			}
			sets, err := planstore.SplitSets(planObjects(t, p))
			if err != nil || len(sets) != 4 || sets[0].PlanHash != p.Status.Plan.Hash {
				t.Fatalf("%d sets (want the current, two generations', the cross pair's), first %s: %v", len(sets), short(sets[0].PlanHash), err)
			}
		})
	}
}

// A cross pair the engine refuses is not published, and both conditions
// name it: here the generations of a kvBuffers pair differ in more than
// their layouts (the P4 edit also halved the layers), so the P8 set's
// prefill side and the D2 set's decode side describe different caches.
func TestRefusedCrossPairNotPublished(t *testing.T) {
	ns := newNamespace(t)
	at := func(p, d, layers int32) pdv1.PDPairSpec {
		s := fixtures.Llama70B(p, d)
		for i := range s.KVBuffers {
			s.KVBuffers[i].Count = layers
		}
		return s
	}
	p := fixtures.Pair(ns, "refused").Spec(at(8, 4, 80)).Obj()
	create(t, p)
	p = waitObserved(t, p)
	p = waitObserved(t, updateSpec(t, p, func(q *pdv1.PDPair) { q.Spec = at(4, 4, 40) }))
	p = waitObserved(t, updateSpec(t, p, func(q *pdv1.PDPair) { q.Spec = at(4, 2, 40) }))
	p = waitGenerations(t, p, []genView{{4, 2, true, 0, 0, 0}, {4, 4, false, 0, 0, 0}, {8, 4, false, 0, 0, 0}},
		metav1.ConditionFalse, pdv1.ReasonGenerationsIncompatible,
		"prefill tp=8,dp=1 × decode tp=2,dp=1: InvalidLayout", "KV buffers 160 (80 target_k, 80 target_v)", "has 80 (40 target_k, 40 target_v)")
	c := wantCondition(t, p, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
	if !strings.Contains(c.Message, "cross pair prefill tp=8,dp=1 × decode tp=2,dp=1 not published: InvalidLayout") {
		t.Fatalf("PlansPublished does not name the refused cross pair: %s", c.Message)
	}
	if s, err := layoutSet(planObjects(t, p), 8, 2); err == nil {
		t.Fatalf("a set for the refused cross pair is published (%s)", short(s.PlanHash))
	}
}

// layoutSet is the published set made for prefill TP p and decode TP d.
func layoutSet(objs []planstore.Object, p, d int) (*planstore.SplitSet, error) {
	sets, err := planstore.SplitSets(objs)
	if err != nil {
		return nil, err
	}
	var seen []string
	for i, s := range sets {
		if s.Layout.Prefill.TPSize == p && s.Layout.Decode.TPSize == d {
			return &sets[i], nil
		}
		seen = append(seen, fmt.Sprintf("P%d×D%d", s.Layout.Prefill.TPSize, s.Layout.Decode.TPSize))
	}
	return nil, fmt.Errorf("no set for P%d×D%d among %v", p, d, seen)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
