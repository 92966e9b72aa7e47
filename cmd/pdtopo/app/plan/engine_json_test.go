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
	"fmt"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

// `plan -o json` of a vLLM or SGLang pair gives each decode rank's targets
// as the engine maps them, numbered as docs/engines/*.md write down:
// decodeTPRank the engine's (SGLang: global, DP attention included),
// prefillTPRank the attention-TP rank inside the prefill DP group, isDummy
// for notify-only targets ("p" a read, "p*" a dummy below). By hand from
// those pages' mapping tables:
//   - vLLM P4→D2 (8 KV heads): decode d reads 2d and 2d+1;
//   - SGLang P4→D8 DP 2 (attention TP 4 = 4): decode r reads r % 4;
//   - SGLang DeepSeek-V3 (MLA) P8→D4: k = 2, decode r reads 2r and only
//     notifies 2r+1.
func TestPlanJSONOfEnginePairs(t *testing.T) {
	dsv3 := func(t *testing.T) string {
		code, out, errOut := clitest.Run(t, "", "pair", "--engine", "sglang", "--name", "dsv3", "--hf-config", "../../testdata/models/deepseek-v3.json",
			"--prefill-tp", "8", "--decode-tp", "4", "--tokens-per-page", "64", "--kv-cache-dtype", "auto")
		if code != cli.ExitOK {
			t.Fatalf("pair: exit %d: %s", code, errOut)
		}
		return out
	}
	for _, c := range []struct {
		name, file string
		stdin      func(*testing.T) string
		want       string
	}{
		{"vllm", "../../../../config/samples/pd_v1alpha1_pdpair_vllm_nixl_p4_d2.yaml", nil, "0:0,1 1:2,3"},
		{"sglang dp attention", "../../../../config/samples/pd_v1alpha1_pdpair_sglang_dp_attention.yaml", nil, "0:0 1:1 2:2 3:3 4:0 5:1 6:2 7:3"},
		{"sglang mla", "-", dsv3, "0:0,1* 1:2,3* 2:4,5* 3:6,7*"},
	} {
		in := ""
		if c.stdin != nil {
			in = c.stdin(t)
		}
		code, out, errOut := clitest.Run(t, in, "plan", "-f", c.file, "-o", "json")
		if code != cli.ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var set struct {
			Plans []struct {
				DecodeTPRank int `json:"decodeTPRank"`
				Targets      []struct {
					PrefillTPRank int  `json:"prefillTPRank"`
					IsDummy       bool `json:"isDummy"`
				} `json:"targets"`
			} `json:"plans"`
		}
		if err := json.Unmarshal([]byte(out), &set); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range set.Plans {
			var ts []string
			for _, tg := range p.Targets {
				s := fmt.Sprint(tg.PrefillTPRank)
				if tg.IsDummy {
					s += "*"
				}
				ts = append(ts, s)
			}
			got = append(got, fmt.Sprintf("%d:%s", p.DecodeTPRank, strings.Join(ts, ",")))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: plans %v, want %s", c.name, got, c.want)
		}
	}
}
