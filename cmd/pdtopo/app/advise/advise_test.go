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

package advise_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/clitest"
)

type adviseJSON struct {
	Layouts []struct {
		Prefill, Decode            transferplan.Parallelism
		Compatible                 bool
		Reason                     string
		Fix                        string
		PlanKind                   string
		FragmentsPerPage           int
		PrefillRanksPerDecodeRank  int
		IdlePrefillRanks           int
		IdlePrefillTPRanks         []int
		BytesPerTokenPerDecodeRank int64
		TransfersPerPage           int64
	} `json:"layouts"`
}

// The models' config.json files the tests of pair use too.
const (
	llamaConfig    = "../../testdata/models/llama-3.1-70b.json"
	deepseekConfig = "../../testdata/models/deepseek-v3.json"
	qwen35Config   = "../../testdata/models/qwen3.5-27b.json"
)

// `pdtopo advise -o json` prints every layout in ranking order, and each
// row says what `pdtopo plan` says of the PDPair `pdtopo pair` writes for
// the same layout: its verdict, its sources, idle ranks and bytes.
func TestAdviseRowsAgreeWithPlans(t *testing.T) {
	for _, c := range []struct {
		config, tokens, dtype string
		prefill, decode       string
		rows                  int
	}{
		{llamaConfig, "16", "bfloat16", "1,2,8,16", "1,4,16", 12},
		{deepseekConfig, "1", "fp8", "8,16", "4,8,16", 6},
		{qwen35Config, "1", "bfloat16", "2,4,8", "1,2,4", 9},
	} {
		code, out, errOut := clitest.Run(t, "", "advise", "--hf-config", c.config, "--prefill-tp", c.prefill, "--decode-tp", c.decode,
			"--tokens-per-page", c.tokens, "--kv-cache-dtype", c.dtype, "-o", "json")
		if code != cli.ExitOK {
			t.Fatalf("%s: exit %d: %s", c.config, code, errOut)
		}
		var res adviseJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Layouts) != c.rows {
			t.Fatalf("%s: %d rows, want %d", c.config, len(res.Layouts), c.rows)
		}
		for i, r := range res.Layouts {
			name := fmt.Sprintf("%s P%d D%d", c.config, r.Prefill.TPSize, r.Decode.TPSize)
			if i > 0 && r.Compatible && (!res.Layouts[i-1].Compatible || res.Layouts[i-1].TransfersPerPage > r.TransfersPerPage) {
				t.Errorf("%s is ranked after a costlier or incompatible row", name)
			}
			code, pair, _ := clitest.Run(t, "", "pair", "--explicit", "--name", "p", "--hf-config", c.config, "--tokens-per-page", c.tokens, "--kv-cache-dtype", c.dtype,
				"--prefill-tp", fmt.Sprint(r.Prefill.TPSize), "--decode-tp", fmt.Sprint(r.Decode.TPSize))
			if !r.Compatible {
				if r.Reason == "" || r.Fix == "" || (code != cli.ExitIncompatible && code != cli.ExitUsage) {
					t.Errorf("%s: incompatible row %+v; pair exit %d", name, r, code)
				}
				continue
			}
			code, plan, errOut := clitest.Run(t, pair, "plan", "-f", "-", "-o", "json")
			if code != cli.ExitOK {
				t.Fatalf("%s: advise says compatible, plan exits %d: %s", name, code, errOut)
			}
			var set transferplan.PlanSet
			if err := json.Unmarshal([]byte(plan), &set); err != nil {
				t.Fatal(err)
			}
			sources, idle := 0, set.Plans[0].IdlePrefillTPRanks
			for _, p := range set.Plans {
				n := 0
				for _, tg := range p.Targets {
					if !tg.IsDummy {
						n++
					}
				}
				sources = max(sources, n)
			}
			if string(set.Plans[0].PlanKind) != r.PlanKind || sources != r.PrefillRanksPerDecodeRank ||
				!slices.Equal(idle, r.IdlePrefillTPRanks) || r.IdlePrefillRanks != len(idle) {
				t.Errorf("%s: advise says kind %s, %d sources, idle %v; plan says %s, %d, %v",
					name, r.PlanKind, r.PrefillRanksPerDecodeRank, r.IdlePrefillTPRanks, set.Plans[0].PlanKind, sources, idle)
			}
		}
	}
}

func TestAdviseTableAndBadInput(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "advise", "--hf-config", llamaConfig, "--prefill-tp", "2,8", "--decode-tp", "4,16", "--kv-cache-dtype", "bfloat16")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"MODEL LlamaForCausalLM", "PREFILL TP/DP", "TRANSFERS/PAGE", "Why the others do not plan, and what would:",
		"prefill TP 2/1, decode TP 16/1: UnsupportedHeterogeneousTP"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--hf-config", llamaConfig, "--decode-tp", "4", "--kv-cache-dtype", "bfloat16"}, "--prefill-tp and --decode-tp are required"},
		{[]string{"--hf-config", llamaConfig, "--prefill-tp", "0", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16"}, "--prefill-tp values must be from 1 to 4096"},
		{[]string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--decode-dp", "3", "--kv-cache-dtype", "bfloat16"}, "no --decode-dp value divides"},
		{[]string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16", "-o", "svg"}, "-o must be one of table, json, yaml"},
	} {
		if code, _, errOut := clitest.Run(t, "", append([]string{"advise"}, c.args...)...); code != cli.ExitUsage || !strings.Contains(errOut, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.says)
		}
	}
	// No layout plans: exit 3, the table still printed.
	if code, out, _ := clitest.Run(t, "", "advise", "--hf-config", llamaConfig, "--prefill-tp", "2", "--decode-tp", "16", "--kv-cache-dtype", "bfloat16"); code != cli.ExitIncompatible || !strings.Contains(out, "UnsupportedHeterogeneousTP") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
