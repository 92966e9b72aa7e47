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

package repo

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers rank the repository's top-level directories: a package may import
// the module's packages of its own layer or lower ones, never higher. The API
// is the edge: every layer may import it, and it imports none of them. The
// test tree is above everything: tests may import any package, and no
// product code imports the test tree, but for testPeers.
var layers = map[string]int{
	"api":         0,
	"pkg":         1,
	"internal":    2,
	"controllers": 3,
	"webhooks":    3,
	"cmd":         4,
	"hack":        4,
	"conformance": 4, // local checks against the engines' own code
	"clients":     4, // tests that drive the Python client against the agent
	"test":        5,
}

// testPeers are the commands that are themselves test equipment, built on
// the test tree: cmd/prefill-peer is the prefill side of the wire
// (test/prefillpeer) as a process, for `make run`'s demo and for engines'
// integration tests. It ships in no image.
var testPeers = map[string]string{
	"cmd/prefill-peer": "test/prefillpeer",
}

// importAllowed reports whether a package in directory from (relative to
// the repository) may import the module package in directory to, and why
// not.
func importAllowed(from, to string) (bool, string) {
	fromTop, _, _ := strings.Cut(from, "/")
	toTop, _, _ := strings.Cut(to, "/")
	fl, fok := layers[fromTop]
	tl, tok := layers[toTop]
	switch {
	case !fok:
		return false, "the directory " + fromTop + " has no layer: add it to layers"
	case !tok:
		return false, "the directory " + toTop + " has no layer: add it to layers"
	case toTop == "api" && fromTop != "api":
		return true, ""
	case testPeers[from] == to:
		return true, ""
	case fromTop == "api" && toTop != "api":
		return false, "the API imports nothing of the repository"
	case toTop == "test" && fromTop != "test":
		return false, "product code never imports the test tree (test/ may import anything; cmd/prefill-peer is the one test peer)"
	case tl > fl:
		return false, toTop + " is above " + fromTop
	}
	return true, ""
}

// planner is the package that must stay pure.
const planner = "pkg/transferplan"

// plannerTree are the packages of the planner and their codec, which import
// one another and nothing else of the module: the shared vocabulary, each
// wire's planner and the Python-literal JSON codec.
var plannerTree = []string{planner, planner + "/v1", planner + "/contract", "pkg/pyjson"}

// plannerImportAllowed: the standard library only, and nothing of the
// network; no package of this module (the wire lives in pkg/kvwire).
func plannerImportAllowed(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	if strings.Contains(first, ".") { // a module path: Kubernetes, ZMQ, this repository, …
		return false
	}
	return first != "net" && imp != "os/exec" && imp != "syscall"
}

// plannerTreeImportAllowed is plannerImportAllowed with the planner tree's
// own packages besides (the wire packages' separation is
// TestWirePackagesNeverImportEachOther's).
func plannerTreeImportAllowed(imp string) bool {
	if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
		return slices.Contains(plannerTree, rel)
	}
	return plannerImportAllowed(imp)
}

// goPackages maps every directory of the module holding non-test Go files to
// the imports of those files. Directories with their own go.mod (other
// modules) are left out.
func goPackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range repoFiles(t, root, ".go") {
		if strings.HasSuffix(file, "_test.go") || inOtherModule(root, path.Dir(file)) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, file), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(file)
		if _, seen := pkgs[dir]; !seen {
			pkgs[dir] = nil
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			pkgs[dir] = append(pkgs[dir], imp)
		}
	}
	return pkgs
}

func inOtherModule(root, dir string) bool {
	for ; dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
			return true
		}
	}
	return false
}

// Imports run one way: commands → controllers and webhooks → internal →
// pkg, with the API at the edges (docs/design.md).
func TestImportDirection(t *testing.T) {
	pkgs := goPackages(t, repoRoot(t))
	for dir, imports := range pkgs {
		for _, imp := range imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if allowed, why := importAllowed(dir, rel); !allowed {
				t.Errorf("%s imports %s: %s", dir, rel, why)
			}
		}
	}
	if _, ok := pkgs["pkg/receiver"]; !ok {
		t.Fatalf("pkg/receiver not found among %d packages: the walk is broken", len(pkgs))
	}
}

// The planner, and the derivation of buffers from a model config, know
// nothing of Kubernetes, the wire or sockets.
func TestPlannerImportsOnlyTheStandardLibrary(t *testing.T) {
	pkgs := goPackages(t, repoRoot(t))
	for _, pure := range []string{planner, "pkg/pyjson", "pkg/modelgeom"} {
		imports, ok := pkgs[pure]
		if !ok {
			t.Fatalf("%s not found", pure)
		}
		for _, imp := range imports {
			if !plannerImportAllowed(imp) {
				t.Errorf("%s imports %s", pure, imp)
			}
		}
	}
	for _, pure := range plannerTree[1:3] {
		imports, ok := pkgs[pure]
		if !ok {
			t.Fatalf("%s not found", pure)
		}
		for _, imp := range imports {
			if !plannerTreeImportAllowed(imp) {
				t.Errorf("%s imports %s", pure, imp)
			}
		}
	}
}

// The rules themselves, on imports the repository must never have.
func TestImportRules(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"cmd/manager", "controllers", true},
		{"controllers", "pkg/engine", true},
		{"test/receivertest", "pkg/receiver", true},
		{"test/integration/manager", "cmd/manager", true},
		{"test/testutil", "internal/controlplane", true},
		{"cmd/prefill-peer", "test/prefillpeer", true},
		{"cmd/prefill-peer", "test/kvsim", false},
		{"cmd/manager", "test/prefillpeer", false},
		{"internal/localcp", "test/testutil", false},
		{"hack/run-local", "test/fixtures", false},
		{"conformance/tokenspeed/contractwire/interop", "pkg/kvwire", true},
		{"pkg/kvwire", "conformance/tokenspeed", false},
		{"pkg/kvwire", "pkg/transferplan", true},
		{"webhooks", "api/v1alpha1", true},
		{"pkg/receiver", "api/v1alpha1", true},
		{"pkg/receiver", "test/receivertest", false},
		{"internal/localcp", "controllers", false},
		{"controllers", "cmd/manager", false},
		{"api/v1alpha1", "pkg/transferplan", false},
		{"newdir/x", "pkg/kvwire", false},
	} {
		if got, why := importAllowed(c.from, c.to); got != c.ok {
			t.Errorf("importAllowed(%s, %s) = %v (%s), want %v", c.from, c.to, got, why, c.ok)
		}
	}
	for imp, ok := range map[string]bool{
		"fmt": true, "encoding/json": true, "net/http": false, "net": false,
		"k8s.io/apimachinery/pkg/runtime": false, "github.com/pebbe/zmq4": false, module + "/pkg/kvwire": false,
	} {
		if plannerImportAllowed(imp) != ok {
			t.Errorf("plannerImportAllowed(%s) = %v, want %v", imp, !ok, ok)
		}
	}
	for imp, ok := range map[string]bool{
		"fmt": true, "net": false, module + "/pkg/pyjson": true, module + "/pkg/transferplan": true,
		module + "/pkg/kvwire": false, module + "/pkg/planstore": false,
	} {
		if plannerTreeImportAllowed(imp) != ok {
			t.Errorf("plannerTreeImportAllowed(%s) = %v, want %v", imp, !ok, ok)
		}
	}
}
