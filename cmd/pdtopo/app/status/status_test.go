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

package status_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/status"
	"github.com/pdtopo/pdtopo/test/clitest"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// statusPairs are two pairs as the API server would list them: one planned
// and published, one never reconciled.
func statusPairs() []pdv1.PDPair {
	planned := fixtures.Pair("llm", "llama").Generation(2).PrefillTP(8).DecodeTP(4).Status(pdv1.PDPairStatus{
		Conditions: []metav1.Condition{
			{Type: string(pdv1.PDPairLayoutCompatible), Status: metav1.ConditionTrue, ObservedGeneration: 2},
			{Type: string(pdv1.PDPairPlansPublished), Status: metav1.ConditionTrue, ObservedGeneration: 2},
			{Type: string(pdv1.PDPairReady), Status: metav1.ConditionTrue, ObservedGeneration: 2},
		},
		Plan: &pdv1.PlanSummary{Kind: "fragmented", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 3,
			IdlePrefillTPRanks: []int32{5, 7}, FragmentCount: 1280, FragmentsPerPage: 16,
			Hash: "0123456789abcdef0123", ConfigMaps: []string{"llama-plans", "llama-plans-0", "llama-plans-1"}},
		DecodeFleet: &pdv1.DecodeFleetStatus{Pods: 2, AgentsReady: 2, AgentsCurrent: 1},
	}).Obj()
	fresh := fixtures.Pair("llm", "mla").Generation(1).Prefill(16, 2).DecodeTP(8).Obj()
	return []pdv1.PDPair{*planned, *fresh}
}

// printWith prints the pairs as `status -o format` would.
func printWith(t *testing.T, format string) string {
	t.Helper()
	return printPairs(t, format, statusPairs(), false)
}

// printPairs prints pairs with status's print flags set to -o format.
func printPairs(t *testing.T, format string, pairs []pdv1.PDPair, withNamespace bool) string {
	t.Helper()
	flags := status.NewPrintFlags()
	flags.OutputFormat = format
	f, err := flags.Format()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := flags.Print(&b, f, status.Output(pairs, withNamespace)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestStatusOutputName(t *testing.T) {
	if got, want := printWith(t, "name"), "pdpair.pd.pdtopo.dev/llama\npdpair.pd.pdtopo.dev/mla\n"; got != want {
		t.Errorf("-o name:\n%s\nwant\n%s", got, want)
	}
}

func TestStatusOutputJSONAndYAML(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		out := printWith(t, format)
		var list pdv1.PDPairList
		var err error
		if format == "json" {
			err = json.Unmarshal([]byte(out), &list)
		} else {
			err = yaml.UnmarshalStrict([]byte(out), &list)
		}
		if err != nil {
			t.Fatalf("-o %s does not decode as a PDPairList: %v\n%s", format, err, out)
		}
		if list.APIVersion != "pd.pdtopo.dev/v1alpha1" || list.Kind != "PDPairList" || len(list.Items) != 2 {
			t.Fatalf("-o %s: %s %s with %d items", format, list.APIVersion, list.Kind, len(list.Items))
		}
		for i, name := range []string{"llama", "mla"} {
			item := list.Items[i]
			if item.Name != name || item.Kind != "PDPair" || item.APIVersion != "pd.pdtopo.dev/v1alpha1" {
				t.Errorf("-o %s item %d: %s %s %s", format, i, item.APIVersion, item.Kind, item.Name)
			}
		}
		if got := list.Items[0].Status.Plan; got == nil || got.Hash != "0123456789abcdef0123" || got.FragmentCount != 1280 {
			t.Errorf("-o %s lost the plan status: %+v", format, got)
		}
	}
	// An empty namespace is still a document.
	if out := printPairs(t, "json", nil, false); !strings.Contains(out, `"kind": "PDPairList"`) || !strings.Contains(out, `"items": []`) {
		t.Errorf("-o json of no pairs: %s", out)
	}
}

func TestStatusOutputJSONPath(t *testing.T) {
	if got := printWith(t, "jsonpath={.items[*].metadata.name}"); got != "llama mla" {
		t.Errorf("-o jsonpath: %q", got)
	}
}

func TestStatusWide(t *testing.T) {
	out := printPairs(t, "wide", statusPairs(), true)
	for _, re := range []string{
		`(?m)^NAMESPACE\s+NAME\s+PREFILL\s+DECODE\s+PLAN\s+COMPATIBLE\s+FRAGMENTS\s+PUBLISHED\s+READY\s+DECODE PODS\s+AGENTS READY\s+AGENTS CURRENT\s+TARGETS/RANK\s+FRAGMENTS/PAGE\s+IDLE PREFILL\s+CONFIGMAPS\s+PLAN HASH$`,
		`(?m)^llm\s+llama\s+TP8 DP1\s+TP4 DP1\s+fragmented\s+True\s+1280\s+True\s+True\s+2\s+2/2\s+1/2\s+2–3\s+16\s+2\s+3\s+0123456789ab$`,
		`(?m)^llm\s+mla\s+TP16 DP2\s+TP8 DP1\s+-\s+Unknown\s+-\s+Unknown\s+Unknown\s+-\s+-\s+-\s+-\s+-\s+-\s+-\s+-$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("-o wide lacks %s:\n%s", re, out)
		}
	}
	if table := printPairs(t, "", statusPairs(), false); strings.Contains(table, "PLAN HASH") || !strings.HasPrefix(table, "NAME ") {
		t.Errorf("the default table has wide's columns or a namespace:\n%s", table)
	}
}

// A format neither the table nor cli-runtime knows is refused before the
// cluster is asked (the kubeconfig here points nowhere), naming them all.
func TestStatusRefusesUnknownOutput(t *testing.T) {
	code, _, errOut := clitest.Run(t, "", "status", "-o", "table", "--server", "https://127.0.0.1:1")
	if code != cli.ExitUsage || !strings.Contains(errOut, `-o must be one of wide, json, yaml`) || !strings.Contains(errOut, `got "table"`) {
		t.Errorf("status -o table: exit %d %q", code, errOut)
	}
}
