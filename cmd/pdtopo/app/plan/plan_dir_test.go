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
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

func TestPlanDirectory(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "plan", "-f", "../../../../config/samples", "--name", "deepseek-v3-mla-p16-d8")
	if code != cli.ExitOK || !strings.HasPrefix(out, "PDPair deepseek-v3-mla-p16-d8: prefill TP 16 DP 1 → decode TP 8 DP 1") {
		t.Fatalf("plan -f DIR --name: exit %d %q %s", code, out, errOut)
	}
	// Several pairs and no --name: the names to choose from, in file order.
	code, _, errOut = clitest.Run(t, "", "plan", "-f", "../../../../config/samples")
	if code != cli.ExitUsage || !strings.Contains(errOut, "manifest holds 11 PDPairs (contract-gqa8-p8-d4, deepseek-v3-dp-attention, llama3-70b-gqa-p8-d4, llama3-70b-gqa-p8-d4-16-tokens,") {
		t.Errorf("plan -f DIR without --name: exit %d %q", code, errOut)
	}

	dir := t.TempDir()
	in, _ := os.ReadFile(gqaManifest)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", "resources:\n- pair.yaml\n")
	write("notes.txt", "not a manifest")
	write("empty.yaml", "# only a comment\n")
	write("pair.yaml", string(in))
	if code, out, errOut := clitest.Run(t, "", "plan", "-f", dir); code != cli.ExitOK || !strings.HasPrefix(out, "PDPair llama-70b:") {
		t.Errorf("one pair among skipped files: exit %d %q %s", code, out, errOut)
	}
	// An application's directory: its workloads beside the PDPair are
	// skipped, and said so on standard error.
	write("app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llama-decode}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: llama-prefill}\n")
	write("config.yaml", strings.Replace(string(in), "kind: PDPair", "kind: ConfigMap", 1))
	code, out, errOut = clitest.Run(t, "", "plan", "-f", dir)
	if code != cli.ExitOK || !strings.HasPrefix(out, "PDPair llama-70b:") {
		t.Errorf("a mixed directory: exit %d %q %s", code, out, errOut)
	}
	for _, note := range []string{
		"skipped " + filepath.Join(dir, "app.yaml") + ": Deployment llama-decode, Service llama-prefill (not PDPairs)\n",
		"skipped " + filepath.Join(dir, "config.yaml") + ": ConfigMap llama-70b (not PDPairs)\n",
	} {
		if !strings.Contains(errOut, note) {
			t.Errorf("a mixed directory: stderr lacks %q:\n%s", note, errOut)
		}
	}
	if strings.Contains(errOut, "kustomization") || strings.Contains(errOut, "empty.yaml") {
		t.Errorf("kustomization and comment-only files are noted as skipped:\n%s", errOut)
	}
	// A PDPair that does not decode is an error, not a skip.
	write("broken.yaml", strings.Replace(string(in), "tensorParallelSize: 8", "tensorParalelSize: 8", 1))
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", dir); code != cli.ExitUsage || !strings.Contains(errOut, filepath.Join(dir, "broken.yaml")+`: document 1: PDPair: unknown field "spec.prefill.tensorParalelSize"`) {
		t.Errorf("broken PDPair in the directory: exit %d %q", code, errOut)
	}
	// A directory of other objects only: no PDPair, and what was skipped.
	only := t.TempDir()
	if err := os.WriteFile(filepath.Join(only, "app.yaml"), []byte("kind: Service\nmetadata: {name: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", only); code != cli.ExitUsage || !strings.Contains(errOut, "no PDPair in its 1 manifest file(s)") || !strings.Contains(errOut, "Service s (not PDPairs)") {
		t.Errorf("a directory without PDPairs: exit %d %q", code, errOut)
	}
	if code, _, errOut := clitest.Run(t, "", "plan", "-f", t.TempDir()); code != cli.ExitUsage || !strings.Contains(errOut, "no PDPair in its 0 manifest file(s)") {
		t.Errorf("empty directory: exit %d %q", code, errOut)
	}
}

func TestPlanArgumentErrors(t *testing.T) {
	cases := []struct {
		args    []string
		mention string
	}{
		{[]string{"plan"}, "-f FILE|DIR|- or a PDPair NAME is required"},
		{[]string{"plan", "-f", gqaManifest, "some-pair"}, "not both"},
		{[]string{"plan", "some-pair", "--name", "x"}, "--name picks a PDPair from a manifest"},
		{[]string{"plan", "a", "b"}, "accepts at most 1 arg"},
		{[]string{"plan", "-f", gqaManifest, "--bogus"}, "unknown flag: --bogus"},
		{[]string{"routes", "-f", gqaManifest}, "--rank N is required"},
		{[]string{"routes", "-f", gqaManifest, "--rank", "-1"}, "--rank -1 is out of range"},
		{[]string{"routes", "-f", gqaManifest, "--rank", "0", "-o", "svg"}, `-o must be one of table, json, yaml, got "svg"`},
		{[]string{"nonsense"}, `unknown command "nonsense"`},
		{[]string{}, "a command is required"},
	}
	for _, c := range cases {
		code, _, errOut := clitest.Run(t, "", c.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, c.mention) {
			t.Errorf("%v: exit %d %q, want %d mentioning %q", c.args, code, errOut, cli.ExitUsage, c.mention)
		}
	}
}
