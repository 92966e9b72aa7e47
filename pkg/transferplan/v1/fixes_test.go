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

package v1

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Every refusal of a random layout ends with a fix.
func TestEveryRefusalEndsWithAFix(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2026))
	refused := 0
	for range 3000 {
		l := randomLayout(rng)
		_, err := EstimatePlanSize(l)
		var le *transferplan.LayoutError
		if !errors.As(err, &le) {
			continue
		}
		refused++
		if le.Fix == "" || !strings.HasSuffix(le.Message, ". Fix: "+le.Fix) {
			t.Fatalf("%s refusal without a fix at the end: %q", le.Reason, le.Message)
		}
	}
	if refused < 100 {
		t.Fatalf("only %d of 3000 random layouts were refused", refused)
	}
}

// The TP sizes a fix names are exactly those at which the same model,
// registered by the engine's rule at that TP (heads below, built here, not
// by the search), plans.
func TestSuggestedTPsAreTheOnesThatPlan(t *testing.T) {
	valid := func(heads, tp int) bool { return heads%tp == 0 || tp%heads == 0 }
	checked := 0
	for _, heads := range []int{1, 2, 4, 8, 16} {
		for _, T := range []int{1, 16} {
			for P := 1; P <= 32; P++ {
				for D := 1; D <= 32; D++ {
					if !valid(heads, P) || !valid(heads, D) {
						continue
					}
					l := mha(P, D).tokensPerPage(T).heads(2, heads, 256).build()
					if _, err := Plan(l); err == nil {
						continue
					}
					checked++
					r := distinctGeometries(l)
					shapes, _, ok := estimateShapes(r)
					if !ok {
						t.Fatalf("%d heads P%d D%d: no shape", heads, P, D)
					}
					for _, side := range []struct {
						prefill bool
						current int
						build   func(tp int) Layout
					}{
						{false, D, func(tp int) Layout { return mha(P, tp).tokensPerPage(T).heads(2, heads, 256).build() }},
						{true, P, func(tp int) Layout { return mha(tp, D).tokensPerPage(T).heads(2, heads, 256).build() }},
					} {
						got := alternatives(r, shapes, side.prefill, side.current)
						limit := min(max(2*max(P, D), heads), maxTriedTP)
						for tp := 1; tp <= limit; tp++ {
							if tp == side.current || !valid(heads, tp) {
								continue
							}
							_, err := Plan(side.build(tp))
							if (err == nil) != slices.Contains(got, tp) {
								t.Fatalf("%d heads, %d tokens/page, P%d D%d: the fix names %v for the %s side; TP %d plans: %v",
									heads, T, P, D, got, map[bool]string{true: "prefill", false: "decode"}[side.prefill], tp, err)
							}
						}
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d incompatible layouts checked", checked)
	}
}
