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

package v1alpha1_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// generated are the files `make manifests generate` writes from markers.
var generated = []string{
	"config/crd/bases/pd.pdtopo.dev_pdpairs.yaml",
	"config/rbac/role.yaml",
	"config/webhook/manifests.yaml",
	"api/v1alpha1/zz_generated.deepcopy.go",
}

// TestGeneratedFilesAreCurrent runs `make manifests generate` in a copy of
// the module and fails if any generated file differs from the one checked
// in: markers changed without regenerating. Fix with `make manifests generate`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen (several seconds)")
	}
	_, err := exec.LookPath("make")
	testutil.RequireTool(t, err, testutil.SkipMakeEnv, "make runs controller-gen to check the generated files")
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	copyModule(t, root, tmp)
	cmd := exec.Command("make", "--no-print-directory", "manifests", "generate")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make manifests generate: %v\n%s", err, out)
	}
	for _, f := range generated {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatalf("controller-gen did not write %s: %v", f, err)
		}
		have, err := os.ReadFile(filepath.Join(root, f))
		if err != nil || !bytes.Equal(have, want) {
			t.Errorf("%s is stale (or missing): run `make manifests generate`", f)
		}
	}
}

// copyModule copies what controller-gen reads (Go sources, go.mod/go.sum,
// the Makefile, the boilerplate header), and the one hand-written manifest
// `make manifests` copies into the chart, without bin/ or nested modules.
func copyModule(t *testing.T, root, dst string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || rel == "bin" || isModule(path)) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !(strings.HasSuffix(rel, ".go") || rel == "go.mod" || rel == "go.sum" || rel == "Makefile" || rel == "hack/boilerplate.go.txt" ||
			rel == filepath.Join("config", "namespaced", "role.yaml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
