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

package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/internal/pairlayout"
)

const pairYAML = `apiVersion: pd.pdtopo.dev/v1alpha1
kind: PDPair
metadata: {name: a}
spec:
  prefill: {tensorParallelSize: 2}
  decode: {tensorParallelSize: 2}
  kvBuffers:
  - {kind: TargetK, count: 1, decodeItemBytes: 512}
  - {kind: TargetV, count: 1, decodeItemBytes: 512}
`

func TestReadPDPairs(t *testing.T) {
	cases := []struct {
		name, in string
		pairs    int
		err      string
	}{
		{"one YAML document", pairYAML, 1, ""},
		{"JSON", `{"apiVersion":"pd.pdtopo.dev/v1alpha1","kind":"PDPair","metadata":{"name":"j"},"spec":{"prefill":{"tensorParallelSize":1},"decode":{"tensorParallelSize":1},"kvBuffers":[]}}`, 1, ""},
		{"two documents and a comment-only one", pairYAML + "---\n# just a comment\n---\n" + pairYAML, 2, ""},
		{"wrong apiVersion", strings.Replace(pairYAML, "v1alpha1", "v9", 1), 0, `apiVersion is "pd.pdtopo.dev/v9"`},
		{"duplicate field", strings.Replace(pairYAML, "metadata: {name: a}", "metadata: {name: a, name: b}", 1), 0, "document 1"},
		{"unknown nested field", strings.Replace(pairYAML, "count: 1,", "cnt: 1,", 1), 0, `unknown field "spec.kvBuffers[0].cnt"`},
		{"nothing", "", 0, "no PDPair"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pairs, err := ReadPDPairs(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil || len(pairs) != tc.pairs {
				t.Fatalf("got %d pairs, %v; want %d", len(pairs), err, tc.pairs)
			}
		})
	}
}

func TestReadPDPairTooLarge(t *testing.T) {
	_, err := ReadPDPairs(strings.NewReader(strings.Repeat("#", maxManifestBytes+1)))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v", err)
	}
}

// FuzzReadPDPairs: arbitrary bytes never panic the reader nor the conversion
// to planner input, and errors are returned, not swallowed.
func FuzzReadPDPairs(f *testing.F) {
	f.Add([]byte(pairYAML))
	f.Add([]byte(pairYAML + "---\n" + pairYAML))
	f.Add([]byte(`{"apiVersion":"pd.pdtopo.dev/v1alpha1","kind":"PDPair","spec":{"decode":{"tensorParallelSize":-3}}}`))
	f.Add([]byte("kind: PDPair\napiVersion: pd.pdtopo.dev/v1alpha1\nspec:\n  stateBuffers: [{count: 99999999999}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pairs, err := ReadPDPairs(strings.NewReader(string(data)))
		if err != nil {
			if len(pairs) != 0 {
				t.Fatal("pairs returned with an error")
			}
			return
		}
		for _, p := range pairs {
			// Huge counts and sizes must be refused, not allocated.
			_, _ = pairlayout.FromSpec(p.Spec)
		}
	})
}

func TestReadPDPairFile(t *testing.T) {
	dir := t.TempDir()
	good, empty := filepath.Join(dir, "pair.yaml"), filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(good, []byte(pairYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadPDPairFile(good, ""); err != nil || p.Name != "a" {
		t.Fatalf("ReadPDPairFile(%s) = %v, %v; want the pair a", good, p, err)
	}
	for _, path := range []string{empty, filepath.Join(dir, "absent.yaml")} {
		if _, err := ReadPDPairFile(path, ""); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadPDPairFile(%s): %v, want an error naming the file", path, err)
		}
	}
}
