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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

// hostileManifest is within every field's limits, yet its plans would hold
// 4096 prefill ranks × 8192 buffers = 33,554,432 fragments for one decode rank.
const hostileManifest = `apiVersion: pd.pdtopo.dev/v1alpha1
kind: PDPair
metadata:
  name: hostile
spec:
  prefill: {tensorParallelSize: 4096}
  decode: {tensorParallelSize: 1}
  kvBuffers:
  - {kind: TargetK, count: 4096, decodeItemBytes: 4096, prefillItemBytes: 1}
  - {kind: TargetV, count: 4096, decodeItemBytes: 4096, prefillItemBytes: 1}
`

func TestPlanRefusesOverBudget(t *testing.T) {
	code, out, errOut := clitest.Run(t, hostileManifest, "plan", "-f", "-", "-o", "json")
	if code != cli.ExitTooLarge || out != "" {
		t.Fatalf("exit %d, %d bytes of output; want %d and none", code, len(out), cli.ExitTooLarge)
	}
	for _, want := range []string{"PlanTooLarge", "33554432 fragments", "--max-plan-fragments", "--max-plan-bytes"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not say %q", errOut, want)
		}
	}
}

// The flag moves the limit exactly: GQA P8→D4 over 160 buffers has 1280
// fragments, 4 decode ranks × 160 buffers × 2 (each decode rank takes its
// two heads from two prefill ranks).
func TestPlanBudgetFlag(t *testing.T) {
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", gqaManifest, "--max-plan-fragments=1279"); code != cli.ExitTooLarge || !strings.Contains(errOut, "1280 fragments > 1279") {
		t.Fatalf("1279 allowed: exit %d, %s", code, errOut)
	}
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", gqaManifest, "--max-plan-fragments=1280"); code != cli.ExitOK {
		t.Fatalf("1280 allowed: exit %d, %s", code, errOut)
	}
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", gqaManifest, "--max-plan-bytes=-1"); code != cli.ExitUsage || !strings.Contains(errOut, "--max-plan-bytes") {
		t.Fatalf("negative limit: exit %d, %s", code, errOut)
	}
}
