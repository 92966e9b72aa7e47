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

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPlanDirectory(t *testing.T) {
	code, out, errOut := pdtopo(t, "", "plan", "-f", "../../config/samples", "--name", "deepseek-v3-mla-p16-d8")
	if code != exitOK || !strings.HasPrefix(out, "PDPair deepseek-v3-mla-p16-d8: prefill TP 16 DP 1 → decode TP 8 DP 1") {
		t.Fatalf("plan -f DIR --name: exit %d %q %s", code, out, errOut)
	}
	// Several pairs and no --name: the names to choose from, in file order.
	code, _, errOut = pdtopo(t, "", "plan", "-f", "../../config/samples")
	if code != exitUsage || !strings.Contains(errOut, "manifest holds 9 PDPairs (contract-gqa8-p8-d4, deepseek-v3-dp-attention, llama3-70b-gqa-p8-d4, llama3-70b-gqa-p8-d4-16-tokens,") {
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
	if code, out, errOut := pdtopo(t, "", "plan", "-f", dir); code != exitOK || !strings.HasPrefix(out, "PDPair llama-70b:") {
		t.Errorf("one pair among skipped files: exit %d %q %s", code, out, errOut)
	}
	// An application's directory: its workloads beside the PDPair are
	// skipped, and said so on standard error.
	write("app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llama-decode}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: llama-prefill}\n")
	write("config.yaml", strings.Replace(string(in), "kind: PDPair", "kind: ConfigMap", 1))
	code, out, errOut = pdtopo(t, "", "plan", "-f", dir)
	if code != exitOK || !strings.HasPrefix(out, "PDPair llama-70b:") {
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
	if code, _, errOut := pdtopo(t, "", "plan", "-f", dir); code != exitUsage || !strings.Contains(errOut, filepath.Join(dir, "broken.yaml")+`: document 1: PDPair: unknown field "spec.prefill.tensorParalelSize"`) {
		t.Errorf("broken PDPair in the directory: exit %d %q", code, errOut)
	}
	// A directory of other objects only: no PDPair, and what was skipped.
	only := t.TempDir()
	if err := os.WriteFile(filepath.Join(only, "app.yaml"), []byte("kind: Service\nmetadata: {name: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := pdtopo(t, "", "plan", "-f", only); code != exitUsage || !strings.Contains(errOut, "no PDPair in its 1 manifest file(s)") || !strings.Contains(errOut, "Service s (not PDPairs)") {
		t.Errorf("a directory without PDPairs: exit %d %q", code, errOut)
	}
	if code, _, errOut := pdtopo(t, "", "plan", "-f", t.TempDir()); code != exitUsage || !strings.Contains(errOut, "no PDPair in its 0 manifest file(s)") {
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
		code, _, errOut := pdtopo(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.mention) {
			t.Errorf("%v: exit %d %q, want %d mentioning %q", c.args, code, errOut, exitUsage, c.mention)
		}
	}
}

func TestRoutesOffline(t *testing.T) {
	code, out, errOut := pdtopo(t, "", "routes", "-f", "../../config/samples/pd_v1alpha1_pdpair_replicated_heads_p16_d2.yaml", "--rank", "0")
	if code != exitOK {
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
	code, out, _ = pdtopo(t, "", "routes", "-f", "../../config/samples/pd_v1alpha1_pdpair_gqa_p8_d4_16_tokens.yaml", "--rank", "1")
	for _, row := range []string{
		`(?m)^2\s+source\s+1\s+655360\s+0–79\s+TargetK\s+16× \[0,256\) \+256 of 4096 → \[0,256\) \+512 of 8192$`,
		`(?m)^\s+80–159\s+TargetV\s+16× \[0,256\) \+256 of 4096 → \[256,512\) \+512 of 8192$`,
	} {
		if code != exitOK || !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("16-token routes lack %s:\n%s", row, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 12 {
		t.Errorf("16-token routes not folded: %d lines", n)
	}

	in, _ := os.ReadFile("../../config/samples/pd_v1alpha1_pdpair_incompatible_fp8_prefill.yaml")
	if code, out, _ := pdtopo(t, string(in), "routes", "-f", "-", "--rank", "0"); code != exitIncompatible || !strings.HasPrefix(out, "INCOMPATIBLE  UnitSizeMismatch") {
		t.Errorf("incompatible routes: exit %d %q", code, out)
	}
}

func TestVersionFlag(t *testing.T) {
	code, out, _ := pdtopo(t, "", "--version")
	if code != exitOK || !regexp.MustCompile(`^pdtopo dev \(go[0-9.]+ [a-z0-9]+/[a-z0-9]+[^)]*\)\n$`).MatchString(out) {
		t.Errorf("--version: exit %d %q", code, out)
	}
}
