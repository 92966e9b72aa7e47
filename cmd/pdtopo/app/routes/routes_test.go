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

package routes_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

func TestRoutesOffline(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "routes", "-f", "../../../../config/samples/pd_v1alpha1_pdpair_replicated_heads_p16_d2.yaml", "--rank", "0")
	if code != cli.ExitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, want := range []string{
		"decode TP rank 0 of 2, plan fragmented (prefill TP 16 DP 1 → decode TP 2 DP 1)",
		"Idle prefill ranks 1, 3, 5, 7, 9, 11, 13, 15: no decode rank pulls from them",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("routes lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Plans:") {
		t.Errorf("offline routes claims a plan source:\n%s", out)
	}
	// 16-token pages: a prefill head is one 256-byte slot in each of the 16
	// token rows of a decode page (rows of 4096 B on prefill, 8192 B on
	// decode), so each buffer's 16 fragments fold into one stepped line.
	code, out, _ = clitest.Run(t, "", "routes", "-f", "../../../../config/samples/pd_v1alpha1_pdpair_gqa_p8_d4_16_tokens.yaml", "--rank", "1")
	for _, row := range []string{
		`(?m)^2\s+source\s+1\s+655360\s+0–79\s+TargetK\s+16× \[0,256\) \+256 of 4096 → \[0,256\) \+512 of 8192$`,
		`(?m)^\s+80–159\s+TargetV\s+16× \[0,256\) \+256 of 4096 → \[256,512\) \+512 of 8192$`,
	} {
		if code != cli.ExitOK || !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("16-token routes lack %s:\n%s", row, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 12 {
		t.Errorf("16-token routes not folded: %d lines", n)
	}

	in, _ := os.ReadFile("../../../../config/samples/pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml")
	if code, out, _ := clitest.Run(t, string(in), "routes", "-f", "-", "--rank", "0"); code != cli.ExitIncompatible || !strings.HasPrefix(out, "INCOMPATIBLE  UnitSizeMismatch") {
		t.Errorf("incompatible routes: exit %d %q", code, out)
	}
}

// A SGLang pair's routes are the engine's rank map. DeepSeek-V3 (MLA),
// prefill TP 8 → decode TP 4: by docs/engines/sglang.md's mapping (d < p,
// MLA, k = 8 / 4 = 2) decode rank 1 reads prefill rank 2 and only notifies
// prefill rank 3; no bytes are sized, the engine moves them.
func TestRoutesOfARankMapEngine(t *testing.T) {
	code, pair, errOut := clitest.Run(t, "", "pair", "--engine", "sglang", "--name", "dsv3", "--hf-config", "../../testdata/models/deepseek-v3.json",
		"--prefill-tp", "8", "--decode-tp", "4", "--tokens-per-page", "64", "--kv-cache-dtype", "auto")
	if code != cli.ExitOK {
		t.Fatalf("pair: exit %d: %s", code, errOut)
	}
	code, out, errOut := clitest.Run(t, pair, "routes", "-f", "-", "--rank", "1")
	if code != cli.ExitOK {
		t.Fatalf("routes: exit %d: %s", code, errOut)
	}
	for _, row := range []string{
		`decode rank 1 of 4, the engine's rank map \(prefill TP 8 DP 1 → decode TP 4 DP 1\)`,
		`(?m)^2\s+reads\s+1$`,
		`(?m)^3\s+notified only\s+1$`,
		`Reads 1 prefill rank\(s\), notifies 1\.`,
	} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("routes lack %s:\n%s", row, out)
		}
	}
	if strings.Contains(out, "whole items") || strings.Contains(out, "BYTES/PAGE") {
		t.Errorf("rank-map routes size bytes pdtopo does not know:\n%s", out)
	}
}
