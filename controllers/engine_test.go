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
	"strings"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// An engine other than tokenspeed, registered as the only one, is judged
// by the reconciler's plan step as tokenspeed is: its refusal becomes
// LayoutCompatible's reason and its message with the fix, its rank map a
// compatible pair, and an engine whose agent loads no plans has nothing
// encoded to publish.
func TestThePlanStepJudgesWithThePairsEngine(t *testing.T) {
	registry := engine.NewRegistry(fixtures.ToyEngine{})
	for _, tc := range []struct {
		name            string
		prefill, decode int32
		compatible      bool
		reason          pdv1.PDPairConditionReason
		message         string
	}{
		{"P8 D4 maps", 8, 4, true, pdv1.ReasonCompatible, "toy: prefill TP 8 → decode TP 4"},
		{"P4 D8 maps", 4, 8, true, pdv1.ReasonCompatible, "toy: prefill TP 4 → decode TP 8"},
		{"P8 D3 is refused", 8, 3, false, pdv1.PDPairConditionReason(fixtures.ReasonToyTPNotDivisible),
			"prefill TP 8 and decode TP 3 do not divide one another. Fix: give decode a TP that divides 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := fixtures.GQAP8D4("default", "toy")
			pair.Spec.Prefill.TensorParallelSize, pair.Spec.Decode.TensorParallelSize = tc.prefill, tc.decode
			eng := registry.For(pair.Spec)
			if eng.Name() != "toy" || eng.ReadsContracts(pair.Spec) {
				t.Fatalf("the registry gave %s", eng.Name())
			}
			out, err := planPairGated(pair, eng, modelConfig{}, transferplan.DefaultBudget, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.compatible != tc.compatible || out.layoutReason != tc.reason || !strings.Contains(out.layoutMessage, tc.message) {
				t.Errorf("compatible %v, %s: %q; want %v, %s containing %q", out.compatible, out.layoutReason, out.layoutMessage, tc.compatible, tc.reason, tc.message)
			}
			if out.objects != nil || out.hash != "" {
				t.Errorf("an engine without plans published %d objects, hash %q", len(out.objects), out.hash)
			}
			if tc.compatible && out.decodeRanks != int(tc.decode) {
				t.Errorf("%d decode ranks mapped, want %d", out.decodeRanks, tc.decode)
			}
		})
	}
}
