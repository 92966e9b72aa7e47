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
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/clitest"
)

// The contracts in testdata/contract-*.yaml are the engine's own (GQA with
// 2 KV heads on prefill TP 4 and decode TP 1, from pkg/transferplan's
// vectors): two sources, prefill ranks 1 and 3 idle.
const contractManifest = "../../testdata/contract-gqa2-p4-d1.yaml"

func TestPlanContractPairJSON(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "plan", "-f", contractManifest, "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pair, err := manifest.ReadPDPairFile(contractManifest, "")
	if err != nil {
		t.Fatal(err)
	}
	cp, _, err := tokenspeed.ContractPairFromSpec(pair.Spec, engine.ReadInline)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plancontract.Plan(cp)
	if err != nil {
		t.Fatal(err)
	}
	// What the agent's --plan-file loads: the strict plan-set decoder and
	// the per-rank snapshot.
	set, err := plansource.DecodePlanSet([]byte(out))
	if err != nil {
		t.Fatalf("receiver-agent --plan-file would refuse the output: %v", err)
	}
	if !reflect.DeepEqual(set, want) {
		t.Fatalf("printed plan set differs from the planner's")
	}
	snap, err := receiver.SnapshotFor(set, 0)
	if err != nil || snap.Layout.Wire != transferplan.WireCacheContract {
		t.Fatalf("snapshot of rank 0: %+v, %v", snap, err)
	}
	// The names the checks rely on.
	var raw struct {
		Compatible bool `json:"compatible"`
		Plans      []struct {
			DecodeTPRank       int   `json:"decodeTPRank"`
			IdlePrefillTPRanks []int `json:"idlePrefillTPRanks"`
			Targets            []struct {
				PrefillTPRank int  `json:"prefillTPRank"`
				IsDummy       bool `json:"isDummy"`
			} `json:"targets"`
		} `json:"plans"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	var dummies, sources []int
	for _, tg := range raw.Plans[0].Targets {
		if tg.IsDummy {
			dummies = append(dummies, tg.PrefillTPRank)
		} else {
			sources = append(sources, tg.PrefillTPRank)
		}
	}
	if !raw.Compatible || raw.Plans[0].DecodeTPRank != 0 || !slices.Equal(sources, []int{0, 2}) ||
		!slices.Equal(dummies, []int{1, 3}) || !slices.Equal(raw.Plans[0].IdlePrefillTPRanks, []int{1, 3}) {
		t.Fatalf("rank 0: sources %v, dummies %v, idle %v; want 0,2 / 1,3 / 1,3", sources, dummies, raw.Plans[0].IdlePrefillTPRanks)
	}
}

func TestPlanContractPairVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, file, output string
		code               int
		says               []string
	}{
		{"table", contractManifest, "table", cli.ExitOK, []string{"wire CacheContract", "COMPATIBLE  plan fragmented", "idle prefill ranks: 1,3", "dummy"}},
		{"the engine refuses: windows 128 and 64", "../../testdata/contract-window-mismatch.yaml", "json", cli.ExitIncompatible,
			[]string{`"compatible": false`, `"reason": "ContractMismatchGroupSemantics"`, "sliding_window_tokens differs: prefill 128, decode 64", "Fix: "}},
		{"a contract the engine cannot decode", "../../testdata/contract-unknown-dtype.yaml", "json", cli.ExitUsage,
			[]string{"cacheContracts.decode (spec.cacheContracts.decode.inline): plan.fields[0].dtype", `unsupported cache dtype "fp4"`}},
		{"a ConfigMap offline", "../../testdata/contract-configmap.yaml", "json", cli.ExitUsage,
			[]string{`cacheContracts.decode.configMapKeyRef: ConfigMap "decode-contract" key "contract.json" can only be read in the cluster`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := clitest.Run(t, "", "plan", "-f", tc.file, "-o", tc.output)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.says {
				if !strings.Contains(out+errOut, s) {
					t.Errorf("output does not say %q:\n%s%s", s, out, errOut)
				}
			}
		})
	}
}
