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

package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

const (
	gqaSample          = "pd_v1alpha1_pdpair_gqa_p8_d4.yaml"
	mlaSample          = "pd_v1alpha1_pdpair_mla_p16_d8.yaml"
	incompatibleSample = "pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml"
)

// samplePlans plans a sample offline with the planner, as the expectation.
func samplePlans(t *testing.T, file string) *transferplan.PlanSet {
	t.Helper()
	pair, err := manifest.ReadPDPairFile("../../../config/samples/"+file, "")
	if err != nil {
		t.Fatal(err)
	}
	layout, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := planv1.Plan(layout)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestClusterPlanShowsConditionsThenPublishedPlans(t *testing.T) {
	tc := liveCluster(t)
	const gqaName = "gqa-plan"
	tc.applySample(t, nsA, gqaSample, gqaName)
	pair := tc.waitSettled(t, nsA, gqaName)
	if pair.Status.Plan == nil {
		t.Fatalf("operator published no plans: %+v", pair.Status)
	}

	code, out, errOut := tc.cli(t, "plan", gqaName, "--context", "live")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("PDPair %s/%s: generation %d, observed %d\n", nsA, gqaName, pair.Generation, pair.Generation),
		"CONDITION", "MESSAGE\n",
		fmt.Sprintf("Plans: published in ConfigMap(s) %s, plan hash %s\n", strings.Join(pair.Status.Plan.ConfigMaps, ", "), pair.Status.Plan.Hash[:12]),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, c := range pair.Status.Conditions {
		row := regexp.MustCompile(`(?m)^` + c.Type + `\s+` + string(c.Status) + `\s+` + c.Reason + `\s`)
		if !row.MatchString(out) {
			t.Errorf("no row for condition %s=%s (%s):\n%s", c.Type, c.Status, c.Reason, out)
		}
	}
	// Then exactly the table `plan -f` prints offline for the same spec.
	code, offline, _ := clitest.Run(t, "", "plan", "-f", "../../../config/samples/"+gqaSample)
	offline = strings.Replace(offline, "PDPair llama3-70b-gqa-p8-d4:", "PDPair "+gqaName+":", 1) // renamed in the cluster
	if code != cli.ExitOK || !strings.HasSuffix(out, "\n\n"+offline) {
		t.Errorf("cluster output does not end with the offline table (exit %d):\n%s\n--- offline:\n%s", code, out, offline)
	}

	// -o json: the plan set read back from the ConfigMaps, equal to the planner's.
	code, out, errOut = tc.cli(t, "plan", gqaName, "--context", "live", "-o", "json")
	var got transferplan.PlanSet
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("-o json: exit %d, %q %s", code, out, errOut)
	}
	if !reflect.DeepEqual(&got, samplePlans(t, gqaSample)) {
		t.Errorf("published plan set differs from the planner's")
	}
	if errOut != "" {
		t.Errorf("published plans need no note, got %q", errOut)
	}
}

func TestClusterNamespaceAndContextFlags(t *testing.T) {
	tc := liveCluster(t)
	const gqaName, mlaName = "gqa-flags", "mla-flags"
	tc.applySample(t, nsA, gqaSample, gqaName)
	tc.applySample(t, nsB, mlaSample, mlaName)
	tc.waitSettled(t, nsA, gqaName)
	tc.waitSettled(t, nsB, mlaName)

	// The kubeconfig's current context points where nothing listens.
	code, _, errOut := tc.cli(t, "status")
	if code != cli.ExitCluster || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("current context (dead): exit %d %q, want %d naming the address", code, errOut, cli.ExitCluster)
	}
	cases := []struct {
		args        []string
		has, hasNot string
	}{
		{[]string{"--context", "live"}, gqaName, mlaName},
		{[]string{"--context", "live", "-n", nsB}, mlaName, gqaName},
		{[]string{"--context", "live-b"}, mlaName, gqaName},
		{[]string{"--context=live", "--namespace=" + nsB}, mlaName, gqaName},
	}
	for _, c := range cases {
		code, out, errOut := tc.cli(t, append([]string{"status"}, c.args...)...)
		if code != cli.ExitOK || !strings.Contains(out, c.has) || strings.Contains(out, c.hasNot) {
			t.Errorf("status %v: exit %d, want %s and not %s:\n%s%s", c.args, code, c.has, c.hasNot, out, errOut)
		}
	}
	code, out, _ := tc.cli(t, "status", "--context", "live", "-A")
	if code != cli.ExitOK || !regexp.MustCompile(`(?m)^`+nsA+`\s+`+gqaName+`\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+nsB+`\s+`+mlaName+`\s`).MatchString(out) {
		t.Errorf("status -A: exit %d\n%s", code, out)
	}

	// A pair of another namespace is not found until -n names it.
	code, _, errOut = tc.cli(t, "plan", mlaName, "--context", "live")
	if want := fmt.Sprintf(`PDPair %q not found in namespace %q of context "live"`, mlaName, nsA); code != cli.ExitUsage || !strings.Contains(errOut, want) {
		t.Errorf("plan in the wrong namespace: exit %d %q, want %d %q", code, errOut, cli.ExitUsage, want)
	}
	if code, out, errOut := tc.cli(t, "plan", mlaName, "--context", "live", "-n", nsB); code != cli.ExitOK || !strings.Contains(out, "plan mla") {
		t.Errorf("plan -n %s: exit %d %s%s", nsB, code, out, errOut)
	}
}

func TestClusterMissingPair(t *testing.T) {
	tc := liveCluster(t)
	for _, args := range [][]string{
		{"plan", "no-such-pair", "--context", "live"},
		{"routes", "no-such-pair", "--rank", "0", "--context", "live"},
	} {
		code, out, errOut := tc.cli(t, args...)
		want := fmt.Sprintf(`pdtopo %s: PDPair "no-such-pair" not found in namespace %q of context "live"`, args[0], nsA)
		if code != cli.ExitUsage || !strings.Contains(errOut, want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", args, code, out, errOut, cli.ExitUsage, want)
		}
	}
	if code, _, errOut := tc.cli(t, "status", "--context", "no-such-context"); code != cli.ExitUsage || !strings.Contains(errOut, "no-such-context") {
		t.Errorf("unknown context: exit %d %q", code, errOut)
	}
}

func TestClusterRoutesPublishedAndFromSpec(t *testing.T) {
	tc := liveCluster(t)
	const gqaName = "gqa-routes"
	tc.applySample(t, nsA, gqaSample, gqaName)
	tc.waitSettled(t, nsA, gqaName)
	tc.applySample(t, nsNoOperator, gqaSample, gqaName)
	want := samplePlans(t, gqaSample).Plans[3]

	for _, ns := range []string{nsA, nsNoOperator} {
		code, out, errOut := tc.cli(t, "routes", gqaName, "--rank", "3", "--context", "live", "-n", ns, "-o", "json")
		var got transferplan.RoutePlan
		if code != cli.ExitOK || json.Unmarshal([]byte(out), &got) != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("routes -n %s -o json: exit %d, plan differs from the planner's rank 3\n%s%s", ns, code, out, errOut)
		}
		published := ns == nsA
		if note := strings.Contains(errOut, "planned here from the spec"); note == published {
			t.Errorf("routes -n %s -o json: stderr note %q (published %v)", ns, errOut, published)
		}
	}

	code, out, _ := tc.cli(t, "routes", gqaName, "--rank", "3", "--context", "live")
	for _, line := range []string{
		"PDPair team-a/" + gqaName + ": decode TP rank 3 of 4, plan fragmented",
		"Plans: published in ConfigMap(s) ",
		"A room completes when 2 prefill rank(s) report success",
		"Total: 81920 byte(s) per page from 2 source(s)",
	} {
		if code != cli.ExitOK || !strings.Contains(out, line) {
			t.Errorf("routes (published) lacks %q (exit %d):\n%s", line, code, out)
		}
	}
	// Every fragment of rank 3 appears, as its buffer range and byte ranges.
	for _, tgt := range want.Targets {
		f := tgt.Fragments[0]
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+source\s+%d\s+%d\s+0–79\s+TargetK\s+\[%d,%d\) of %d → \[%d,%d\) of %d$`,
			tgt.PrefillTPRank, tgt.RequiredDstInfoNum, 160*f.BytesPerPage,
			f.SrcByteOffset, f.SrcByteOffset+f.BytesPerPage, f.SrcPageStrideBytes, f.DstByteOffset, f.DstByteOffset+f.BytesPerPage, f.DstPageStrideBytes))
		if !row.MatchString(out) {
			t.Errorf("no row %s in\n%s", row, out)
		}
	}

	code, out, _ = tc.cli(t, "routes", gqaName, "--rank", "3", "--context", "live", "-n", nsNoOperator)
	if code != cli.ExitOK || !strings.Contains(out, "Plans: planned here from the spec: the PDPair has no status (is the operator running?)") {
		t.Errorf("routes without operator: exit %d\n%s", code, out)
	}
	code, _, errOut := tc.cli(t, "routes", gqaName, "--rank", "4", "--context", "live")
	if code != cli.ExitUsage || !strings.Contains(errOut, "--rank 4 is out of range") || !strings.Contains(errOut, "decode TP ranks 0..3") {
		t.Errorf("rank out of range: exit %d %q", code, errOut)
	}
}

func TestClusterMLADummiesInRoutes(t *testing.T) {
	tc := liveCluster(t)
	const mlaName = "mla-routes"
	tc.applySample(t, nsB, mlaSample, mlaName)
	tc.waitSettled(t, nsB, mlaName)
	code, out, errOut := tc.cli(t, "routes", mlaName, "--rank", "2", "--context", "live-b")
	want := samplePlans(t, mlaSample).Plans[2]
	if code != cli.ExitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, tgt := range want.Targets {
		role := "source"
		if tgt.IsDummy {
			role = "dummy"
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+%s\s`, tgt.PrefillTPRank, role)).MatchString(out) {
			t.Errorf("target %d not shown as %s:\n%s", tgt.PrefillTPRank, role, out)
		}
	}
	dummies := len(want.Targets) - want.RealTargetCount()
	if dummies == 0 || !strings.Contains(out, fmt.Sprintf("%d dummy target(s)", dummies)) {
		t.Errorf("want %d dummies reported:\n%s", dummies, out)
	}
}

func TestClusterIncompatiblePair(t *testing.T) {
	tc := liveCluster(t)
	const incompatibleName = "incompatible"
	tc.applySample(t, nsA, incompatibleSample, incompatibleName)
	pair := tc.waitSettled(t, nsA, incompatibleName)
	var reason string
	for _, c := range pair.Status.Conditions {
		if c.Type == string(pdv1.PDPairLayoutCompatible) {
			reason = c.Reason
		}
	}
	code, out, _ := tc.cli(t, "plan", incompatibleName, "--context", "live")
	if code != cli.ExitIncompatible || reason == "" ||
		!regexp.MustCompile(`(?m)^LayoutCompatible\s+False\s+`+reason+`\s`).MatchString(out) ||
		!strings.Contains(out, "INCOMPATIBLE  "+reason) {
		t.Errorf("plan of an incompatible pair: exit %d, reason %q\n%s", code, reason, out)
	}
	code, out, _ = tc.cli(t, "status", "--context", "live")
	if code != cli.ExitOK || !regexp.MustCompile(incompatibleName+`\s+TP8 DP1\s+TP4 DP1\s+-\s+False \(`+reason+`\)\s+-\s+False`).MatchString(out) {
		t.Errorf("status row of the incompatible pair:\n%s", out)
	}
}

func TestClusterStatusColumns(t *testing.T) {
	tc := liveCluster(t)
	const gqaName = "gqa-status"
	tc.applySample(t, nsB, gqaSample, gqaName)
	tc.waitSettled(t, nsB, gqaName)
	// One decode pod opts in; with no kubelet its agent never gets ready.
	pod := fixtures.DecodePod(nsB, "gqa-status-decode-0", gqaName).Obj()
	if err := tc.k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(context.Background(), pod) })
	pair := tc.waitFor(t, nsB, gqaName, func(p *pdv1.PDPair) bool { return p.Status.DecodeFleet != nil && p.Status.DecodeFleet.Pods == 1 })

	sum := samplePlans(t, gqaSample).Summarize()
	code, out, _ := tc.cli(t, "status", "--context", "live-b")
	row := regexp.MustCompile(fmt.Sprintf(`(?m)^%s\s+TP8 DP1\s+TP4 DP1\s+%s\s+True\s+%d\s+True\s+True\s+1\s+0/1\s+0/1\s*$`, gqaName, sum.Kind, sum.Fragments))
	if code != cli.ExitOK || !row.MatchString(out) || pair.Status.Plan.FragmentCount != int64(sum.Fragments) {
		t.Errorf("status: exit %d, want row %s\n%s", code, row, out)
	}
	if !strings.Contains(out, "DECODE PODS  AGENTS READY  AGENTS CURRENT") {
		t.Errorf("status header lacks the decode fleet columns:\n%s", out)
	}

	// -o wide: the plan's shape, from the planner, and its hash.
	set := samplePlans(t, gqaSample)
	code, out, _ = tc.cli(t, "status", "--context", "live-b", "-o", "wide")
	wide := regexp.MustCompile(fmt.Sprintf(`(?m)^%s\s.*\s0/1\s+%d–%d\s+%d\s+%d\s+2\s+%s\s*$`, gqaName,
		sum.MinTargets, sum.MaxTargets, sum.FragmentsPerPage, len(sum.IdlePrefillRanks), set.Hash()[:12]))
	if code != cli.ExitOK || !wide.MatchString(out) {
		t.Errorf("status -o wide: exit %d, want row %s\n%s", code, wide, out)
	}
	// -o json and -o name, as kubectl get prints them.
	code, out, errOut := tc.cli(t, "status", "--context", "live-b", "-o", "json")
	var list pdv1.PDPairList
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &list) != nil || list.Kind != "PDPairList" {
		t.Fatalf("status -o json: exit %d %s\n%s", code, errOut, out)
	}
	var found *pdv1.PDPair
	for i := range list.Items {
		if list.Items[i].Name == gqaName {
			found = &list.Items[i]
		}
	}
	if found == nil || found.Kind != "PDPair" || found.Status.Plan == nil || found.Status.Plan.Hash != set.Hash() {
		t.Errorf("status -o json lacks %s with the planner's hash %s:\n%s", gqaName, set.Hash(), out)
	}
	code, out, _ = tc.cli(t, "status", "--context", "live-b", "-o", "name")
	if code != cli.ExitOK || !strings.Contains(out, "pdpair.pd.pdtopo.dev/"+gqaName+"\n") {
		t.Errorf("status -o name: exit %d\n%s", code, out)
	}
}

func TestClusterGraph(t *testing.T) {
	tc := liveCluster(t)
	const name = "replicated-graph"
	tc.applySample(t, nsA, "pd_v1alpha1_pdpair_replicated_heads_p16_d2.yaml", name)
	tc.waitSettled(t, nsA, name)
	code, out, errOut := tc.cli(t, "graph", name, "--context", "live")
	ranks, edges, dummies := clitest.SVGCounts(t, out)
	// P16→D2 replicated heads: every decode rank pulls from 4 even prefill ranks.
	if code != cli.ExitOK || ranks != 18 || edges != 8 || dummies != 0 || errOut != "" {
		t.Errorf("graph NAME: exit %d, %d ranks %d edges %d dummies, stderr %q", code, ranks, edges, dummies, errOut)
	}
	if !strings.Contains(out, "PDPair "+name+":") || strings.Count(out, "idle: dummies from decode 0") < 8 {
		t.Errorf("graph NAME lacks the title or the idle marks")
	}
	code, out, errOut = tc.cli(t, "graph", name, "--context", "live", "-n", nsNoOperator)
	if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, `PDPair "`+name+`" not found in namespace "no-operator"`) {
		t.Errorf("graph of a missing pair: exit %d %q", code, errOut)
	}
}

// TestClusterStalePublicationIsNotUsed: a status written for an older
// generation, or naming ConfigMaps that are gone, never passes for the
// current plans. The status is written through the real status subresource
// where no operator runs, as an operator would have left it.
func TestClusterStalePublicationIsNotUsed(t *testing.T) {
	tc := liveCluster(t)
	const name = "gqa-stale"
	ctx := context.Background()
	pair := tc.applySample(t, nsNoOperator, gqaSample, name)
	pair.Status = pdv1.PDPairStatus{
		ObservedGeneration: pair.Generation,
		Conditions: []metav1.Condition{{Type: string(pdv1.PDPairPlansPublished), Status: metav1.ConditionTrue,
			Reason: string(pdv1.ReasonPublished), Message: "published", ObservedGeneration: pair.Generation, LastTransitionTime: metav1.Now()}},
		Plan: &pdv1.PlanSummary{Kind: "fragmented", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 2,
			MaxPrefillFanOut: 1, FragmentCount: 1280, Hash: strings.Repeat("ab", 32), ConfigMaps: []string{name + "-plans", name + "-plans-0"}},
	}
	if err := tc.k8s.Status().Update(ctx, pair); err != nil {
		t.Fatal(err)
	}
	code, out, _ := tc.cli(t, "routes", name, "--rank", "0", "--context", "live", "-n", nsNoOperator)
	if code != cli.ExitOK || !strings.Contains(out, "Plans: planned here from the spec: published ConfigMap "+name+"-plans is missing") {
		t.Errorf("status naming missing ConfigMaps: exit %d\n%s", code, out)
	}

	pair.Spec.Prefill.BootstrapAddress = "elsewhere.llm.svc:8998" // a spec change: generation 2
	if err := tc.k8s.Update(ctx, pair); err != nil {
		t.Fatal(err)
	}
	code, out, _ = tc.cli(t, "routes", name, "--rank", "0", "--context", "live", "-n", nsNoOperator)
	if want := "Plans: planned here from the spec: the operator has observed generation 1, the spec is at generation 2"; code != cli.ExitOK || !strings.Contains(out, want) {
		t.Errorf("status of an older generation: exit %d, want %q\n%s", code, want, out)
	}
}

// A pair whose model config is in a ConfigMap: `plan NAME` shows the
// derived buffers the operator planned with, from the pair's status.
func TestClusterModelAwarePairFromAConfigMap(t *testing.T) {
	tc := liveCluster(t)
	ctx := context.Background()
	config, err := os.ReadFile("../testdata/models/llama-3.1-70b.json")
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "llama-config"}, Data: map[string]string{"config.json": string(config)}}
	if err := tc.k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(ctx, cm) })
	pair := fixtures.Pair(nsA, "llama-from-configmap").PrefillTP(8).DecodeTP(4).ModelRef("llama-config", "config.json", "bfloat16").Obj()
	if err := tc.k8s.Create(ctx, pair); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(ctx, pair) })
	got := tc.waitFor(t, nsA, pair.Name, func(p *pdv1.PDPair) bool { return p.Status.Plan != nil && p.Status.Derived != nil })
	code, out, errOut := tc.cli(t, "plan", pair.Name, "--context", "live")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// 8 KV heads of 128 × 2 B: decode items of 2 heads, prefill of 1.
	for _, want := range []string{"MODEL       " + got.Status.Derived.Model, "kvBuffers[0]  TargetK  80     512          256           256          256"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
