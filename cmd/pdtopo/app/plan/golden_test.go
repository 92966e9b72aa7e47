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
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

var update = flag.Bool("update", false, "rewrite cmd/pdtopo/testdata/golden from what `pdtopo plan -o json` prints")

// `pdtopo plan -o json` is a published format (the agent's --plan-file reads
// it, scripts parse it): its output for these manifests is kept byte for
// byte in cmd/pdtopo/testdata/golden, so that a change is a deliberate edit of a golden
// file (`go test ./cmd/pdtopo/app/plan -run TestPlanJSONGolden -update`).
func TestPlanJSONGolden(t *testing.T) {
	cases := []struct {
		manifest, golden string
		exit             int
	}{
		// fragments at two destination offsets, idle prefill ranks
		{"../../testdata/gqa-replicated-p4-d1.yaml", "gqa-replicated-p4-d1.json", cli.ExitOK},
		// MLA: a real target and a dummy per decode rank, no fragments
		{"../../../../config/samples/pd_v1alpha1_pdpair_mla_p16_d8.yaml", "mla-p16-d8.json", cli.ExitOK},
		// an incompatible pair: the reason and message
		{"../../../../config/samples/pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml", "incompatible-fp8-prefill.json", cli.ExitIncompatible},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			code, out, errOut := clitest.Run(t, "", "plan", "-f", c.manifest, "-o", "json")
			if code != c.exit {
				t.Fatalf("exit %d, want %d: %s", code, c.exit, errOut)
			}
			path := filepath.Join("..", "..", "testdata", "golden", c.golden)
			if *update {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with -update)", err)
			}
			if !bytes.Equal([]byte(out), want) {
				t.Fatalf("`pdtopo plan -f %s -o json` differs from %s: the published plan format changed.\n"+
					"If that is deliberate, rewrite the golden files with -update.\ngot:\n%s", c.manifest, path, clipOutput(out))
			}
		})
	}
}

func clipOutput(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
