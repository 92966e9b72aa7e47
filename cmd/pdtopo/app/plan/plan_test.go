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

package plan_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/clitest"
)

const gqaManifest = "../../testdata/gqa-p8-d4.yaml"

func TestPlanJSONMatchesPlanner(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "plan", "-f", gqaManifest, "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pair, err := manifest.ReadPDPairFile(gqaManifest, "")
	if err != nil {
		t.Fatal(err)
	}
	layout, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := planv1.Plan(layout)
	if err != nil {
		t.Fatal(err)
	}
	var got transferplan.PlanSet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not a plan set: %v", err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("printed plan set differs from the planner's")
	}
	// Exactly the documented keys, with targetTPRank null for fragmented plans.
	var raw struct {
		Plans []map[string]json.RawMessage `json:"plans"`
	}
	_ = json.Unmarshal([]byte(out), &raw)
	var keys []string
	for k := range raw.Plans[0] {
		keys = append(keys, k)
	}
	wantKeys := []string{"decodeTPRank", "idlePrefillTPRanks", "planKind", "requiredPrefillResponseNum",
		"supportsRemoteSpecCandidates", "targetTPRank", "targetTPRanks", "targets"}
	if !sameSet(keys, wantKeys) || string(raw.Plans[0]["targetTPRank"]) != "null" {
		t.Errorf("plan keys %v (targetTPRank %s), want %v with null", keys, raw.Plans[0]["targetTPRank"], wantKeys)
	}
}

func TestPlanYAMLAndStdin(t *testing.T) {
	in, _ := os.ReadFile(gqaManifest)
	code, out, errOut := clitest.Run(t, string(in), "plan", "-f", "-", "-o", "yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var set transferplan.PlanSet
	if err := yaml.Unmarshal([]byte(out), &set); err != nil || len(set.Plans) != 4 || set.Plans[3].TargetTPRanks[1] != 7 {
		t.Fatalf("YAML output not a 4-plan set: %v", err)
	}
}

func TestPlanTableReadable(t *testing.T) {
	code, out, _ := clitest.Run(t, "", "plan", "-f", gqaManifest)
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"prefill TP 8 DP 1 → decode TP 4 DP 1",
		"COMPATIBLE  plan fragmented, 4 plan(s), 2–2 prefill target(s) per decode rank, 1280 fragment(s), idle prefill ranks: none",
		"PAGE COST   1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token",
		"3 (needs 2)  6        source  1         160      [0,256) of 256 → [0,256) of 512",
		"             7        source  1         160      [0,256) of 256 → [256,512) of 512",
		"PREFILL FAN-OUT (decode ranks per prefill TP rank): 0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// A vLLM pair's table is the engine's rank map: with prefill TP 4 and
// decode TP 2 on 8 KV heads, vLLM's compute_tp_mapping has decode rank d
// read prefill ranks 2d and 2d+1; there are no buffers, fragments or page
// costs to show, since pdtopo publishes no plans for the engine.
func TestPlanTableOfARankMapEngine(t *testing.T) {
	code, out, _ := clitest.Run(t, "", "plan", "-f", "../../../../config/samples/pd_v1alpha1_pdpair_vllm_nixl_p4_d2.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"prefill TP 4 DP 1 → decode TP 2 DP 1, 16 token(s)/page",
		"COMPATIBLE  rank map, 2 decode rank(s), 2–2 prefill rank(s) per decode rank; the engine moves the bytes, no plans are published",
		"0       0        source\n        1        source\n1       2        source\n        3        source",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"PAGE COST", "plan ,", "whole items"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("table of a rank-map engine shows %q:\n%s", unwanted, out)
		}
	}
	// The picture draws the rank map: SGLang with DP attention 2 on the
	// decode, prefill TP 4 → decode TP 8: decode global rank r reads prefill
	// attention-TP rank r % 4, every decode rank drawn.
	for _, verb := range [][]string{{"plan", "-o", "svg"}, {"graph"}} {
		args := append(append([]string{}, verb...), "-f", "../../../../config/samples/pd_v1alpha1_pdpair_sglang_dp_attention.yaml")
		code, out, errOut := clitest.Run(t, "", args...)
		if code != cli.ExitOK || !strings.Contains(out, `data-from="prefill-1" data-to="decode-5"`) || !strings.Contains(out, "decode · all 2 DP groups · ranks 0–7") {
			t.Errorf("%v of an SGLang pair: exit %d, stderr %q, stdout:\n%s", verb, code, errOut, out)
		}
	}
}

// With 16-token pages each decode rank takes one head of each token row:
// the table states the page cost and folds the rows of a buffer into one line.
func TestPlanTableShowsPageCost(t *testing.T) {
	code, out, _ := clitest.Run(t, "", "plan", "-f", "../../testdata/gqa-p8-d4-16-tokens.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"160 KV + 0 state buffers, 16 token(s)/page",
		"COMPATIBLE  plan fragmented, 4 plan(s), 2–2 prefill target(s) per decode rank, 20480 fragment(s), idle prefill ranks: none",
		"PAGE COST   16 fragments per page for each buffer a decode rank pulls from a prefill rank: decode rank 0 takes 1 of prefill rank 0's 1 heads (256-byte units) from each of the 16 token rows of a page into its 2-head rows",
		"3 (needs 2)  6        source  1         160      token rows t=0–15: [0,256)+t·256 of 4096 → [0,256)+t·512 of 8192",
		"             7        source  1         160      token rows t=0–15: [0,256)+t·256 of 4096 → [256,512)+t·512 of 8192",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanIncompatibleExits3(t *testing.T) {
	in, _ := os.ReadFile(gqaManifest)
	broken := strings.Replace(string(in), "decodeItemBytes: 512\n    decodeUnitBytes: 256\n    prefillUnitBytes: 256\n  - kind: TargetV",
		"decodeItemBytes: 768\n    prefillItemBytes: 512\n    decodeUnitBytes: 256\n    prefillUnitBytes: 256\n  - kind: TargetV", 1)
	code, out, _ := clitest.Run(t, broken, "plan", "-f", "-", "-o", "json")
	if code != cli.ExitIncompatible {
		t.Fatalf("exit %d, want %d", code, cli.ExitIncompatible)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	msg, _ := res["message"].(string)
	if len(res) != 4 || res["compatible"] != false || res["reason"] != "UnsupportedHeterogeneousTP" ||
		!strings.Contains(msg, "prefill holds 2 units × 8 ranks = 16, decode 3 units × 4 ranks = 12") {
		t.Fatalf("incompatible result %v", res)
	}
	// TargetK's decode side says 12 heads, TargetV's 8: only prefill TP
	// 1, 2 and 4 (12/t and 8/t heads per rank) hold both in all.
	if fix := "prefill TP 1, 2 or 4 (keeping decode TP 4) would work"; res["fix"] != fix || !strings.HasSuffix(msg, ". Fix: "+fix) {
		t.Fatalf("fix %q, want %q at the end of the message", res["fix"], fix)
	}
	if code, out, _ := clitest.Run(t, broken, "plan", "-f", "-"); code != cli.ExitIncompatible || !strings.HasPrefix(out, "INCOMPATIBLE  UnsupportedHeterogeneousTP") {
		t.Fatalf("table: exit %d %q", code, out)
	}
}

func TestPlanBadInputExits2(t *testing.T) {
	in, _ := os.ReadFile(gqaManifest)
	good := string(in)
	cases := []struct{ name, stdin, mention string }{
		{"unknown field", strings.Replace(good, "tensorParallelSize: 8", "tensorParalelSize: 8", 1), `unknown field "spec.prefill.tensorParalelSize"`},
		{"wrong type", strings.Replace(good, "tensorParallelSize: 8", "tensorParallelSize: eight", 1), "spec.prefill.tensorParallelSize"},
		{"no PDPair, another kind", strings.Replace(good, "kind: PDPair", "kind: ConfigMap", 1), "skipped -: ConfigMap llama-70b (not PDPairs)\npdtopo plan: -: manifest holds no PDPair"},
		{"wrong apiVersion", strings.Replace(good, "pd.pdtopo.dev/v1alpha1", "pd.pdtopo.dev/v1", 1), `apiVersion is "pd.pdtopo.dev/v1", want pd.pdtopo.dev/v1alpha1`},
		{"dp does not divide tp", strings.Replace(good, "tensorParallelSize: 4\n", "tensorParallelSize: 4\n    dataParallelSize: 3\n", 1), "decode.dataParallelSize: 3 does not divide tensorParallelSize 4"},
		{"zero count", strings.Replace(good, "count: 80", "count: 0", 1), "kvBuffers[0].count: must be at least 1, got 0"},
		{"K/V counts differ", strings.Replace(good, "count: 80", "count: 79", 1), "79 TargetK, 80 TargetV"},
		{"empty", "# nothing\n", "no PDPair"},
		{"not YAML", "{[", "document 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := clitest.Run(t, tc.stdin, "plan", "-f", "-", "-o", "json")
			if code != cli.ExitUsage || !strings.Contains(errOut, tc.mention) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", code, errOut, cli.ExitUsage, tc.mention)
			}
		})
	}
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", "../../testdata/missing.yaml"); code != cli.ExitUsage || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
	if code, _, _ := clitest.Run(t, "", "plan", "-f", gqaManifest, "-o", "xml"); code != cli.ExitUsage {
		t.Errorf("bad -o: exit %d", code)
	}
}

func TestPlanPicksByNameFromSeveral(t *testing.T) {
	in, _ := os.ReadFile(gqaManifest)
	two := string(in) + "---\n" + strings.Replace(string(in), "name: llama-70b", "name: other", 1)
	if code, _, errOut := clitest.Run(t, two, "plan", "-f", "-"); code != cli.ExitUsage || !strings.Contains(errOut, "llama-70b, other") {
		t.Fatalf("ambiguous manifest: exit %d %q", code, errOut)
	}
	if code, out, _ := clitest.Run(t, two, "plan", "-f", "-", "--name", "other"); code != cli.ExitOK || !strings.Contains(out, "PDPair other:") {
		t.Fatalf("--name other: exit %d %q", code, out)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}
