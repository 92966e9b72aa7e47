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

	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
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
			_, _ = tokenspeed.FromSpec(p.Spec)
		}
		among, _, err := ReadPDPairsAmong(strings.NewReader(string(data)))
		if err != nil && len(among) != 0 {
			t.Fatal("pairs returned with an error")
		}
		if len(among) < len(pairs) {
			t.Fatalf("ReadPDPairsAmong found %d PDPairs where ReadPDPairs found %d", len(among), len(pairs))
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

func TestReadPDPairsAmong(t *testing.T) {
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: decode}\nspec: {replicas: 2}\n"
	const values = "replicas: 3\nimage: {tag: v1}\n"
	cases := []struct {
		name, in string
		pairs    []string
		skipped  []string
		err      string
	}{
		{"PDPairs among other objects", deployment + "---\n" + pairYAML + "---\n" + values + "---\nkind: Service\n",
			[]string{"a"}, []string{"Deployment decode", "document 3 (no kind)", "Service"}, ""},
		{"only other objects", deployment, nil, []string{"Deployment decode"}, "no PDPair"},
		{"a broken PDPair is still an error", deployment + "---\n" + strings.Replace(pairYAML, "count: 1,", "cnt: 1,", 1),
			nil, nil, `document 2: PDPair: unknown field "spec.kvBuffers[0].cnt"`},
		{"a PDPair of another version is an error", strings.Replace(pairYAML, "v1alpha1", "v9", 1), nil, nil, `apiVersion is "pd.pdtopo.dev/v9"`},
		{"not an object", deployment + "---\n- a list\n", nil, nil, "document 2: not a YAML or JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pairs, skipped, err := ReadPDPairsAmong(strings.NewReader(tc.in))
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.err)
			}
			if tc.err == "" && err != nil {
				t.Fatal(err)
			}
			var names, skips []string
			for _, p := range pairs {
				names = append(names, p.Name)
			}
			for _, s := range skipped {
				skips = append(skips, s.String())
			}
			if strings.Join(names, ",") != strings.Join(tc.pairs, ",") || strings.Join(skips, ",") != strings.Join(tc.skipped, ",") {
				t.Errorf("pairs %q skipped %q, want %q and %q", names, skips, tc.pairs, tc.skipped)
			}
		})
	}
	// ReadPDPairs stays strict about other kinds.
	if _, err := ReadPDPairs(strings.NewReader(deployment + "---\n" + pairYAML)); err == nil || !strings.Contains(err.Error(), `document 1: kind is "Deployment", want PDPair`) {
		t.Errorf("ReadPDPairs of a Deployment: %v", err)
	}
}
