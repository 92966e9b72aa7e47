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
	"regexp"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

type engineAdviceJSON struct {
	Engine  string `json:"engine"`
	Layouts []struct {
		Prefill, Decode struct {
			TP int `json:"tensorParallelSize"`
			DP int `json:"dataParallelSize"`
		}
		Compatible                bool
		Reason, Message, Fix      string
		PrefillRanksPerDecodeRank int
		TransfersPerPage          int64
	} `json:"layouts"`
}

// layout names a row "P/pdp>D/ddp", or with "!" and the reason when refused.
func (r engineAdviceJSON) order() []string {
	var out []string
	for _, l := range r.Layouts {
		s := fmt.Sprintf("%d/%d>%d/%d", l.Prefill.TP, l.Prefill.DP, l.Decode.TP, l.Decode.DP)
		if !l.Compatible {
			s += "!" + l.Reason
		}
		out = append(out, s)
	}
	return out
}

// `pdtopo advise --engine vllm|sglang` ranks by the engine's transfer
// costs. The orders below are worked out by hand from docs/engines/*.md
// (the mapping tables) and the cost keys rules.Rank documents, for
// Llama-3.1-70B (8 KV heads):
//   - vLLM (reads per decode rank, descriptors per decode block, the larger
//     descriptor, notifications; then TPs nearest each other): one read at
//     P4→D4, P4→D8 (prefill TP 4's blocks are twice P8's), P8→D8; two at
//     P4→D2 then P8→D4; four at P8→D2. Prefill TP 16 is above both the 8 KV
//     heads and every decode TP: rule 3 refuses it.
//   - vLLM, decode blocks of 32 against prefill's 16: prefill TP above decode
//     TP needs equal blocks, so P8→D4 is refused; P4→D8 reads one rank in
//     two descriptors per decode block.
//   - SGLang (reads, notifications, decode ranks per prefill rank): at
//     attention TP equal (P4→D4, P4→D8 DP 2) one read and one decode rank
//     each; P4→D8 one read, two decode ranks per prefill rank; P4→D4 DP 2
//     (attention TP 2) two reads; P6→D4 DP 2 three. Prefill 6 against
//     decode attention TP 4 or 8 does not divide: refused.
func TestAdviseEngineOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
		// sources are the rows' prefill ranks per decode rank, in order.
		sources []int
	}{
		{"vllm", []string{"--engine", "vllm", "--prefill-tp", "4,8,16", "--decode-tp", "2,4,8", "--tokens-per-page", "16"},
			[]string{"4/1>4/1", "4/1>8/1", "8/1>8/1", "4/1>2/1", "8/1>4/1", "8/1>2/1",
				"16/1>2/1!ReplicatedPrefillKV", "16/1>4/1!ReplicatedPrefillKV", "16/1>8/1!ReplicatedPrefillKV"},
			[]int{1, 1, 1, 2, 2, 4}},
		{"vllm blocks", []string{"--engine", "vllm", "--kv-connector", "NixlConnector", "--prefill-tp", "4,8", "--decode-tp", "4,8",
			"--prefill-tokens-per-page", "16", "--decode-tokens-per-page", "32"},
			[]string{"4/1>4/1", "4/1>8/1", "8/1>8/1", "8/1>4/1!BlockSizeNotEqual"}, []int{1, 1, 1}},
		{"sglang", []string{"--engine", "sglang", "--prefill-tp", "4,6", "--decode-tp", "4,8", "--decode-dp", "1,2", "--tokens-per-page", "64"},
			[]string{"4/1>4/1", "4/1>8/2", "4/1>8/1", "4/1>4/2", "6/1>4/2",
				"6/1>4/1!TPRatioNotDivisible", "6/1>8/1!TPRatioNotDivisible", "6/1>8/2!TPRatioNotDivisible"},
			[]int{1, 1, 1, 2, 3}},
	} {
		args := append([]string{"advise", "--hf-config", llamaConfig, "--kv-cache-dtype", "auto", "-o", "json"}, c.args...)
		code, out, errOut := clitest.Run(t, "", args...)
		if code != cli.ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var res engineAdviceJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if got := res.order(); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: order\n got %v\nwant %v", c.name, got, c.want)
		}
		if res.Engine != c.args[1] {
			t.Errorf("%s: engine %q", c.name, res.Engine)
		}
		for i, l := range res.Layouts {
			switch {
			case l.Compatible && (i >= len(c.sources) || l.PrefillRanksPerDecodeRank != c.sources[i]):
				t.Errorf("%s: row %d reads %d prefill ranks per decode rank, want %v", c.name, i+1, l.PrefillRanksPerDecodeRank, c.sources)
			case !l.Compatible && (l.Fix == "" || !strings.HasSuffix(l.Message, l.Fix)):
				t.Errorf("%s: refused row %d without its fix: %+v", c.name, i+1, l)
			}
		}
	}
}

// The table says the engine, dashes what the engine does not let pdtopo
// count, and lists each refusal with its fix.
func TestAdviseEngineTable(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "advise", "--engine", "vllm", "--hf-config", llamaConfig, "--kv-cache-dtype", "auto",
		"--prefill-tp", "16", "--decode-tp", "8,16", "--tokens-per-page", "16")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"engine vllm (NixlConnector), page 16 → 16, KV cache auto → auto",
		"prefill TP 16/1, decode TP 8/1: ReplicatedPrefillKV: vLLM: prefill.tensorParallelSize: prefill TP 16 is above both decode TP 8 and the model's 8 KV heads",
		"Fix: set decode --tensor-parallel-size to 16",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^1\s+16/1\s+16/1\s+compatible\s+-\s+-\s+1\s+0\s+-\s+1\s+1 read`).MatchString(out) {
		t.Errorf("the compatible row lacks its dashes and counts:\n%s", out)
	}
	// Nothing the engine serves: exit 3, the table still printed.
	code, out, _ = clitest.Run(t, "", "advise", "--engine", "vllm", "--hf-config", llamaConfig, "--kv-cache-dtype", "auto",
		"--prefill-tp", "16", "--decode-tp", "8", "--tokens-per-page", "16")
	if code != cli.ExitIncompatible || !strings.Contains(out, "ReplicatedPrefillKV") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestAdviseEngineBadInput(t *testing.T) {
	base := []string{"advise", "--hf-config", llamaConfig, "--kv-cache-dtype", "auto", "--prefill-tp", "4", "--decode-tp", "4"}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--engine", "trtllm"}, `--engine "trtllm" is not an engine pdtopo knows; known engines: sglang, tokenspeed, vllm`},
		{[]string{"--engine", "vllm", "--decode-dp", "2"}, "--decode-dp applies to engine tokenspeed or sglang, not to engine vllm"},
		{[]string{"--engine", "sglang", "--kv-cache-layout", "NHD"}, "--kv-cache-layout applies to engine vllm, not to engine sglang"},
		{[]string{"--engine", "vllm", "--prefill-pp", "2"}, "--prefill-pp applies to engine sglang, not to engine vllm"},
		{[]string{"--prefill-tokens-per-page", "16"}, "--prefill-tokens-per-page applies to engine vllm or sglang, not to engine tokenspeed"},
		{[]string{"--engine", "vllm", "--kv-cache-layout", "HDN"}, `--kv-cache-layout must be HND or NHD (VLLM_KV_CACHE_LAYOUT), got "HDN"`},
		{[]string{"--engine", "sglang", "--decode-pp", "0"}, "--decode-pp must be from 1 to 4096, got 0"},
	} {
		if code, _, errOut := clitest.Run(t, "", append(append([]string{}, base...), c.args...)...); code != cli.ExitUsage || !strings.Contains(errOut, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, cli.ExitUsage, c.says)
		}
	}
}
