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

package localcp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// sampleOutcome is what a sample's comment promises a newcomer the status will say.
type sampleOutcome struct {
	kind       transferplan.PlanKind
	minTargets int
	maxTargets int
	idle       []int
	// reason is set for the incompatible sample; its comment must quote the
	// planner's message verbatim.
	reason transferplan.Reason
}

var sampleOutcomes = map[string]sampleOutcome{
	"pd_v1alpha1_pdpair_gqa_p8_d4.yaml":                {kind: transferplan.PlanFragmented, minTargets: 2, maxTargets: 2},
	"pd_v1alpha1_pdpair_gqa_p8_d4_16_tokens.yaml":      {kind: transferplan.PlanFragmented, minTargets: 2, maxTargets: 2},
	"pd_v1alpha1_pdpair_replicated_heads_p16_d2.yaml":  {kind: transferplan.PlanFragmented, minTargets: 4, maxTargets: 4, idle: []int{1, 3, 5, 7, 9, 11, 13, 15}},
	"pd_v1alpha1_pdpair_mla_p16_d8.yaml":               {kind: transferplan.PlanMLA, minTargets: 2, maxTargets: 2},
	"pd_v1alpha1_pdpair_mla_l15_p8_d4.yaml":            {kind: transferplan.PlanMLA, minTargets: 8, maxTargets: 8},
	"pd_v1alpha1_pdpair_hybrid_p4_d4.yaml":             {kind: transferplan.PlanIdentity, minTargets: 1, maxTargets: 1},
	"pd_v1alpha1_pdpair_dp_attention.yaml":             {kind: transferplan.PlanMLA, minTargets: 4, maxTargets: 4},
	"pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml": {reason: transferplan.ReasonUnitSizeMismatch},
	// Pairs of engines whose own connector moves the bytes: judged by that
	// engine's rules, mapped without plans.
	"pd_v1alpha1_pdpair_vllm_nixl_p4_d2.yaml":     {minTargets: 2, maxTargets: 2},
	"pd_v1alpha1_pdpair_sglang_dp_attention.yaml": {minTargets: 1, maxTargets: 1},
}

// TestSamplesPlanAsTheirCommentsSay keeps config/samples honest: every sample
// is a strict PDPair, the planner agrees with the outcome its comment
// describes, and every sample is listed here and in kustomization.yaml.
func TestSamplesPlanAsTheirCommentsSay(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "samples")
	files, err := sampleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, file := range files {
		base := filepath.Base(file)
		seen = append(seen, base)
		t.Run(strings.TrimSuffix(base, ".yaml"), func(t *testing.T) {
			if strings.HasPrefix(base, "pd_v1alpha1_pdpair_contract_") {
				// A cache-contract pair: planned from its contracts, held to the
				// engine's own vectors by cmd/pdtopo's and pkg/transferplan's tests.
				if !strings.Contains(string(kustomization), "- "+base+"\n") {
					t.Errorf("%s is not listed in config/samples/kustomization.yaml", base)
				}
				return
			}
			want, ok := sampleOutcomes[base]
			if !ok {
				t.Fatalf("%s has no expected outcome in sampleOutcomes", file)
			}
			if !strings.Contains(string(kustomization), "- "+base+"\n") {
				t.Errorf("%s is not listed in config/samples/kustomization.yaml", base)
			}
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			pair, err := manifest.ReadPDPair(strings.NewReader(string(text)), "")
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if eng := engines.For(pair.Spec); !eng.InjectsAgent() {
				checkEngineSample(t, file, eng, pair.Spec, want)
				return
			}
			layout, err := tokenspeed.FromSpec(pair.Spec)
			if transferplan.IsInvalidLayout(err) {
				t.Fatalf("%s is structurally invalid: %v", file, err)
			}
			var set *transferplan.PlanSet
			if err == nil {
				set, err = planv1.Plan(layout)
			}
			if want.reason != "" {
				checkRejection(t, string(text), err, want.reason)
				return
			}
			if err != nil {
				t.Fatalf("%s: want a compatible layout, planner says %v", file, err)
			}
			sum := set.Summarize()
			got := sampleOutcome{kind: sum.Kind, minTargets: sum.MinTargets, maxTargets: sum.MaxTargets, idle: sum.IdlePrefillRanks}
			if len(got.idle) == 0 {
				got.idle = nil
			}
			if got.kind != want.kind || got.minTargets != want.minTargets || got.maxTargets != want.maxTargets || !slices.Equal(got.idle, want.idle) {
				t.Errorf("%s: planner gives kind %s, %d-%d targets, idle %v; the sample's comment says kind %s, %d-%d targets, idle %v",
					file, got.kind, got.minTargets, got.maxTargets, got.idle, want.kind, want.minTargets, want.maxTargets, want.idle)
			}
		})
	}
	for base := range sampleOutcomes {
		if !slices.Contains(seen, base) {
			t.Errorf("sampleOutcomes names %s, which is not in %s", base, dir)
		}
	}
}

// checkRejection requires the planner's reason and that the sample's comment
// quotes the reason and the exact message the status will carry.
func checkRejection(t *testing.T, text string, err error, reason transferplan.Reason) {
	t.Helper()
	var le *transferplan.LayoutError
	if !errors.As(err, &le) {
		t.Fatalf("want a %s rejection, planner says %v", reason, err)
	}
	if le.Reason != reason {
		t.Fatalf("want reason %s, planner gives %s: %s", reason, le.Reason, le.Message)
	}
	if !strings.Contains(text, string(reason)) || !strings.Contains(text, "#       "+le.Message+"\n") {
		t.Errorf("the sample's comment must quote the status: reason %s and, on its own comment line, the message\n  %s", reason, le.Message)
	}
}

// checkEngineSample judges a sample of an engine without plans by that
// engine: compatible, and each decode rank reads as many prefill ranks as
// the sample's comment says.
func checkEngineSample(t *testing.T, file string, eng engine.Engine, spec pdv1.PDPairSpec, want sampleOutcome) {
	t.Helper()
	p, err := eng.Resolve(spec, engine.Inputs{})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ranks, err := p.Map()
	if err != nil {
		t.Fatalf("%s: want a compatible pair, %s says %v", file, eng.Name(), err)
	}
	if ranks.Plans() != nil {
		t.Fatalf("%s: engine %s published plans", file, eng.Name())
	}
	for d := range ranks.DecodeRanks() {
		from, err := ranks.PrefillRanks(d)
		if err != nil || len(from) < want.minTargets || len(from) > want.maxTargets {
			t.Errorf("%s: decode rank %d reads %v (%v); the comment says %d-%d prefill ranks", file, d, from, err, want.minTargets, want.maxTargets)
		}
	}
}
