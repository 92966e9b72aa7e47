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
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func genRole(tp int32) pdv1.FleetLayout {
	return pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: ptr.To[int32](1)}
}

func gen(p, d int32, current bool, lastUsed time.Time) pdv1.PlanGeneration {
	return pdv1.PlanGeneration{Prefill: genRole(p), Decode: genRole(d), Current: current, Since: metav1.NewTime(lastUsed), LastUsed: metav1.NewTime(lastUsed)}
}

func pairAt(p, d int32, gens ...pdv1.PlanGeneration) *pdv1.PDPair {
	pair := &pdv1.PDPair{Spec: pdv1.PDPairSpec{Prefill: genRole(p), Decode: genRole(d)}}
	pair.Generation = 7
	pair.Status.Generations = gens
	return pair
}

func layouts(gens []pdv1.PlanGeneration) string {
	var parts []string
	for _, g := range gens {
		c := ""
		if g.Current {
			c = "*"
		}
		parts = append(parts, fmt.Sprintf("P%dD%d%s", g.Prefill.TensorParallelSize, g.Decode.TensorParallelSize, c))
	}
	return strings.Join(parts, " ")
}

func usageOf(decodePods map[int]int32, prefill map[int]int32) *layoutUsage {
	u := newLayoutUsage()
	for tp, n := range decodePods {
		u.decodePods[usageKey{layout: transferplan.Parallelism{TPSize: tp, DPSize: 1}}] = n
	}
	for tp, n := range prefill {
		u.prefill[transferplan.Parallelism{TPSize: tp, DPSize: 1}] = n
	}
	return &u
}

// Which generations one reconcile keeps, from what it saw in use.
func TestNextGenerations(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	long := now.Add(-2 * GenerationGrace)
	cases := []struct {
		name string
		pair *pdv1.PDPair
		in   generationsInput
		want string
	}{
		{"first reconcile", pairAt(8, 4), generationsInput{servable: true, usage: usageOf(nil, nil)}, "P8D4*"},
		{"decode rollout, old pods remain", pairAt(8, 2, gen(8, 4, true, long)), generationsInput{servable: true, usage: usageOf(map[int]int32{4: 2}, nil)}, "P8D2* P8D4"},
		{"decode rollout, old prefill layout is the current one: not a use", pairAt(8, 2, gen(8, 4, false, long)), generationsInput{servable: true, usage: usageOf(nil, map[int]int32{8: 3})}, "P8D2*"},
		{"prefill rollout, old prefill instances met", pairAt(4, 4, gen(8, 4, true, long)), generationsInput{servable: true, usage: usageOf(map[int]int32{4: 2}, map[int]int32{8: 1})}, "P4D4* P8D4"},
		{"replaced just now: its grace starts", pairAt(8, 2, gen(8, 4, true, long)), generationsInput{servable: true, usage: usageOf(nil, nil)}, "P8D2* P8D4"},
		{"nothing uses it, within the grace", pairAt(8, 2, gen(8, 4, false, now.Add(-time.Minute))), generationsInput{servable: true, usage: usageOf(nil, nil)}, "P8D2* P8D4"},
		{"nothing uses it, grace over", pairAt(8, 2, gen(8, 4, false, long)), generationsInput{servable: true, usage: usageOf(nil, nil)}, "P8D2*"},
		{"pods not listed: nothing dropped", pairAt(8, 2, gen(8, 4, false, long)), generationsInput{servable: true}, "P8D2* P8D4"},
		{"spec not servable: the served one stays, not current", pairAt(8, 3, gen(8, 4, true, long)), generationsInput{usage: usageOf(nil, nil), refusal: "UnsupportedHeterogeneousTP: …"}, "P8D4"},
		{"back to an older layout: it becomes current again", pairAt(8, 4, gen(8, 2, true, now), gen(8, 4, false, now)), generationsInput{servable: true, usage: usageOf(map[int]int32{2: 1}, nil)}, "P8D4* P8D2"},
		{"bounded: the least recently used go", pairAt(8, 1,
			gen(8, 2, true, now), gen(8, 4, false, now.Add(-3*time.Minute)), gen(8, 8, false, now.Add(-2*time.Minute)), gen(8, 16, false, now.Add(-time.Minute)), gen(4, 2, false, now.Add(-4*time.Minute))),
			generationsInput{servable: true, usage: usageOf(nil, nil)}, "P8D1* P8D2 P8D16 P8D8"},
	}
	// An upgrade of the engine at the same TP and DP: the pods of each
	// version count for their own generation only.
	versioned := func(p, d int32, version string, current bool, lastUsed time.Time) pdv1.PlanGeneration {
		g := gen(p, d, current, lastUsed)
		g.Prefill.EngineVersion, g.Decode.EngineVersion = version, version
		return g
	}
	upgraded := pairAt(8, 4, versioned(8, 4, "0.10.2", false, long))
	upgraded.Spec.Prefill.EngineVersion, upgraded.Spec.Decode.EngineVersion = "0.11.0", "0.11.0"
	oldBlock := gen(8, 4, false, long)
	oldBlock.Decode.TokensPerPage = ptr.To[int32](16)
	reblocked := pairAt(8, 4, oldBlock)
	reblocked.Spec.Decode.TokensPerPage = ptr.To[int32](32)
	tp4 := transferplan.Parallelism{TPSize: 4, DPSize: 1}
	podsOf := func(counts map[string]int32) *layoutUsage {
		u := newLayoutUsage()
		for v, n := range counts {
			u.decodePods[usageKey{tp4, v}] = n
		}
		return &u
	}
	cases = append(cases, []struct {
		name string
		pair *pdv1.PDPair
		in   generationsInput
		want string
	}{
		{"engine upgrade, old-version pods remain", upgraded, generationsInput{servable: true, usage: podsOf(map[string]int32{"0.10.2": 1, "0.11.0": 3})}, "P8D4* P8D4"},
		{"engine upgrade, only new-version pods: the old generation goes", upgraded, generationsInput{servable: true, usage: podsOf(map[string]int32{"0.11.0": 4})}, "P8D4*"},
		{"engine upgrade, pods without a version count for neither versioned generation", upgraded, generationsInput{servable: true, usage: podsOf(map[string]int32{"": 4})}, "P8D4*"},
		{"a change pods cannot tell apart (the decode block size): the new pods do not keep the old generation", reblocked, generationsInput{servable: true, usage: podsOf(map[string]int32{"": 4})}, "P8D4*"},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.now = now
			got := nextGenerations(c.pair, c.in)
			if layouts(got) != c.want {
				t.Fatalf("generations %s, want %s", layouts(got), c.want)
			}
			if len(got) > pdv1.MaxPlanGenerations {
				t.Fatalf("%d generations, past the bound %d", len(got), pdv1.MaxPlanGenerations)
			}
		})
	}
}

func TestKeptGenerationSaysWhy(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	got := nextGenerations(pairAt(8, 3, gen(8, 4, true, now)), generationsInput{usage: usageOf(nil, nil), refusal: "UnsupportedHeterogeneousTP: x", now: now, generation: 7})
	if len(got) != 1 || !strings.Contains(got[0].Message, "the spec's generation 7 is not servable (UnsupportedHeterogeneousTP: x)") {
		t.Fatalf("generations %+v: want the kept one to say why", got)
	}
	got = nextGenerations(pairAt(8, 2, gen(8, 4, true, now)), generationsInput{servable: true, usage: usageOf(map[int]int32{4: 2}, nil), now: now})
	if len(got) != 2 || got[1].DecodePods != 2 || !strings.Contains(got[1].Message, "2 decode pods and 0 agents of decode layout tp=4,dp=1 remain") {
		t.Fatalf("generations %+v: want the old one kept with its 2 pods", got)
	}
}

// The pairs the publisher plans: the current one first, each generation's
// own, then the cross pairs, each once.
func TestServedLayoutPairs(t *testing.T) {
	now := time.Now()
	cases := []struct {
		pair *pdv1.PDPair
		want string
	}{
		{pairAt(8, 4), "[prefill tp=8,dp=1 × decode tp=4,dp=1]"},
		{pairAt(8, 2, gen(8, 2, true, now), gen(8, 4, false, now)), "[prefill tp=8,dp=1 × decode tp=2,dp=1 prefill tp=8,dp=1 × decode tp=4,dp=1]"},
		{pairAt(4, 2, gen(4, 2, true, now), gen(8, 4, false, now)),
			"[prefill tp=4,dp=1 × decode tp=2,dp=1 prefill tp=8,dp=1 × decode tp=4,dp=1 prefill tp=8,dp=1 × decode tp=2,dp=1 prefill tp=4,dp=1 × decode tp=4,dp=1]"},
		{pairAt(8, 3, gen(8, 4, false, now)), "[prefill tp=8,dp=1 × decode tp=4,dp=1]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(ServedLayoutPairs(c.pair)); got != c.want {
			t.Errorf("ServedLayoutPairs(%s) = %s, want %s", layouts(c.pair.Status.Generations), got, c.want)
		}
	}
}

// A decode pod counts under the layout and version its annotations record;
// one with the layout alone (admitted before versions were recorded, or
// for a pair without them) counts under no version; a version the API
// would not take is not counted.
func TestDecodePodsCountByLayoutAndVersion(t *testing.T) {
	tp4 := transferplan.Parallelism{TPSize: 4, DPSize: 1}
	for _, c := range []struct {
		name        string
		annotations map[string]string
		want        map[usageKey]int32
	}{
		{"layout only", map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1"}, map[usageKey]int32{{tp4, ""}: 1}},
		{"layout and version", map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1", pdv1.AnnotationEngineVersion: "0.11.0"}, map[usageKey]int32{{tp4, "0.11.0"}: 1}},
		{"a version the API refuses", map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1", pdv1.AnnotationEngineVersion: strings.Repeat("9", 65)}, map[usageKey]int32{}},
		{"no layout", map[string]string{pdv1.AnnotationEngineVersion: "0.11.0"}, map[usageKey]int32{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := newLayoutUsage()
			u.addPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}, probeResult{}, false)
			if !maps.Equal(u.decodePods, c.want) {
				t.Errorf("counted %v, want %v", u.decodePods, c.want)
			}
		})
	}
}

// TestCrossPairsEachOnce: after a prefill rollout and then a decode one,
// the current P4×D2 meets the old P8 prefill and the old D4 decode; two
// older generations on D4 give the pair (P4, D4) once, not once each.
func TestCrossPairsEachOnce(t *testing.T) {
	now := time.Now()
	gens := []pdv1.PlanGeneration{gen(4, 2, true, now), gen(4, 4, false, now), gen(8, 4, false, now)}
	var got []string
	for _, lp := range crossPairs(LayoutPair{genRole(4), genRole(2)}, gens) {
		got = append(got, fmt.Sprintf("P%dD%d", lp.Prefill.TensorParallelSize, lp.Decode.TensorParallelSize))
	}
	if want := "P4D4 P8D2"; strings.Join(got, " ") != want {
		t.Errorf("cross pairs %q, want %q", strings.Join(got, " "), want)
	}
}
