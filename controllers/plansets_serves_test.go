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
	"testing"

	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Which earlier plan sets the publisher keeps beside the current one: the
// status.generations list (by plan hash) once the status has one; before,
// the one-role rule. Cross pairs' sets are planned again each time
// (crossplans.go), not kept from what was published.
func TestServesSet(t *testing.T) {
	fl := func(tp int32) pdv1.FleetLayout {
		return pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: ptr.To[int32](1)}
	}
	par := func(tp int) transferplan.Parallelism { return transferplan.Parallelism{TPSize: tp, DPSize: 1} }
	set := func(hash string, p, d int) planstore.SplitSet {
		return planstore.SplitSet{PlanHash: hash, Layout: transferplan.LayoutRecord{Prefill: par(p), Decode: par(d)}}
	}
	gen := func(p, d int32, hash string, current bool) pdv1.PlanGeneration {
		return pdv1.PlanGeneration{Prefill: fl(p), Decode: fl(d), PlanHash: hash, Current: current}
	}
	current := transferplan.LayoutRecord{Prefill: par(4), Decode: par(2)}
	cases := []struct {
		name string
		gens []pdv1.PlanGeneration
		set  planstore.SplitSet
		want bool
	}{
		{name: "no generations: shares the prefill layout", set: set("h1", 4, 4), want: true},
		{name: "no generations: shares neither layout", set: set("h1", 8, 4), want: false},
		{name: "a kept generation's set, by hash", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true), gen(8, 4, "h8", false)}, set: set("h8", 8, 4), want: true},
		{name: "a kept generation's layouts, another hash", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true), gen(4, 4, "h44", false)}, set: set("other", 4, 4), want: false},
		{name: "the current layouts, the set an edit of the buffers replaced", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true)}, set: set("before", 4, 2), want: false},
		{name: "a dropped generation, sharing a role", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true)}, set: set("h42", 4, 4), want: false},
		{name: "a cross pair's set: planned again, never carried over", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true), gen(8, 4, "h84", false)}, set: set("x", 8, 2), want: false},
		{name: "a layout pair nothing lists", gens: []pdv1.PlanGeneration{gen(4, 2, "cur", true), gen(8, 4, "h84", false)}, set: set("x", 2, 2), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pair := &pdv1.PDPair{Spec: pdv1.PDPairSpec{Prefill: fl(4), Decode: fl(2)}}
			pair.Status.Generations = tc.gens
			if got := servesSet(pair, current, tc.set); got != tc.want {
				t.Fatalf("servesSet = %t, want %t", got, tc.want)
			}
		})
	}
}
