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
	"os"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

func TestPlanPictures(t *testing.T) {
	mla := "../../../../config/samples/pd_v1alpha1_pdpair_mla_p16_d8.yaml"
	for _, args := range [][]string{
		{"plan", "-f", mla, "-o", "svg"},
		{"graph", "-f", mla},
	} {
		code, out, errOut := clitest.Run(t, "", args...)
		ranks, edges, dummies := clitest.SVGCounts(t, out)
		// MLA P16→D8: 16 + 8 ranks; every decode rank has one source and one dummy.
		if code != cli.ExitOK || ranks != 24 || edges != 16 || dummies != 8 {
			t.Errorf("%v: exit %d, %d ranks, %d edges (%d dummies), want 24, 16 (8) %s", args, code, ranks, edges, dummies, errOut)
		}
	}
	code, out, _ := clitest.Run(t, "", "graph", "-f", mla, "-o", "dot")
	if code != cli.ExitOK || !strings.HasPrefix(out, `digraph "deepseek-v3-mla-p16-d8" {`) || strings.Count(out, " -> ") != 16 {
		t.Errorf("graph -o dot: exit %d\n%.300s", code, out)
	}
	if code, _, errOut := clitest.Run(t, "", "graph", "-f", mla, "-o", "table"); code != cli.ExitUsage || !strings.Contains(errOut, `-o must be one of svg, dot, got "table"`) {
		t.Errorf("graph -o table: exit %d %q", code, errOut)
	}
	in, _ := os.ReadFile("../../../../config/samples/pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml")
	code, out, errOut := clitest.Run(t, string(in), "plan", "-f", "-", "-o", "svg")
	if code != cli.ExitIncompatible || out != "" || !strings.Contains(errOut, "INCOMPATIBLE UnitSizeMismatch: kvBuffers[0] (TargetK)") {
		t.Errorf("incompatible -o svg: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
