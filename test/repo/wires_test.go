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
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wireNames are the directory names of the engine's wires: wherever a
// directory under pkg/ has a child of each (pkg/transferplan/{v1,contract},
// pkg/kvwire/{v1,contract}), what differs between the wires lives there,
// and adding a wire or a wire field touches one package.
var wireNames = [2]string{"v1", "contract"}

// wirePairs finds, among the package directories, every pair of sibling
// wire directories under pkg/: the parent and its two wire children.
func wirePairs(dirs []string) (pairs [][2]string) {
	has := map[string]bool{}
	for _, d := range dirs {
		for ; d != "." && d != "pkg"; d = path.Dir(d) {
			has[d] = true
		}
	}
	for d := range has {
		if path.Base(d) != wireNames[0] || !strings.HasPrefix(d, "pkg/") {
			continue
		}
		if sibling := path.Join(path.Dir(d), wireNames[1]); has[sibling] {
			pairs = append(pairs, [2]string{d, sibling})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}

// within reports whether dir is tree or one of its subdirectories.
func within(dir, tree string) bool { return dir == tree || strings.HasPrefix(dir, tree+"/") }

// wireCrossings lists how a package of one wire's tree reaches the other
// wire's tree: through any chain of the module's packages from its non-test
// files (graph maps a directory to the module directories its non-test
// files import), or directly from its test files (tests maps a directory to
// what its test files import; a test may reach the other wire through a
// package that links both, such as planstore).
func wireCrossings(graph, tests map[string][]string, a, b string) []string {
	var found []string
	for _, from := range []string{a, b} {
		to := b
		if from == b {
			to = a
		}
		for dir, imports := range graph {
			if !within(dir, from) {
				continue
			}
			if chain := reach(graph, imports, to); chain != nil {
				found = append(found, dir+" → "+strings.Join(chain, " → "))
			}
		}
		for dir, imports := range tests {
			for _, imp := range imports {
				if within(dir, from) && within(imp, to) {
					found = append(found, dir+" (tests) → "+imp)
				}
			}
		}
	}
	sort.Strings(found)
	return found
}

// reach finds a chain of imports from starts to a package of tree, or nil.
func reach(graph map[string][]string, starts []string, tree string) []string {
	seen := map[string]bool{}
	var walk func(dir string) []string
	walk = func(dir string) []string {
		if within(dir, tree) {
			return []string{dir}
		}
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		for _, next := range graph[dir] {
			if chain := walk(next); chain != nil {
				return append([]string{dir}, chain...)
			}
		}
		return nil
	}
	for _, s := range starts {
		if chain := walk(s); chain != nil {
			return chain
		}
	}
	return nil
}

// moduleImports maps every package directory of the module to the module
// directories its files import: its non-test files, or its test files.
func moduleImports(t *testing.T, root string, tests bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range repoFiles(t, root, ".go") {
		if strings.HasSuffix(file, "_test.go") != tests || inOtherModule(root, path.Dir(file)) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, file), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(file)
		if _, seen := out[dir]; !seen {
			out[dir] = nil
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(out[dir], rel) {
				out[dir] = append(out[dir], rel)
			}
		}
	}
	return out
}

// The wires' packages never import each other, directly or through any
// other package of the module (their tests directly): for every pair of
// sibling v1 and contract directories under pkg/, neither tree reaches the
// other.
func TestWirePackagesNeverImportEachOther(t *testing.T) {
	root := repoRoot(t)
	graph, tests := moduleImports(t, root, false), moduleImports(t, root, true)
	dirs := make([]string, 0, len(graph)+len(tests))
	for d := range graph {
		dirs = append(dirs, d)
	}
	for d := range tests {
		dirs = append(dirs, d)
	}
	pairs := wirePairs(dirs)
	if !slices.Contains(pairs, [2]string{"pkg/transferplan/v1", "pkg/transferplan/contract"}) {
		t.Fatalf("the transferplan wire packages are not among the pairs found (%v): the walk is broken", pairs)
	}
	for _, p := range pairs {
		for _, c := range wireCrossings(graph, tests, p[0], p[1]) {
			t.Errorf("%s: the wire packages %s and %s must not import each other", c, p[0], p[1])
		}
	}
}

// The rule itself, on graphs the repository must never have.
func TestWireCrossingsRule(t *testing.T) {
	dirs := []string{"pkg/a/v1", "pkg/a/contract/sub", "pkg/b/v1", "cmd/x/v1", "cmd/x/contract", "pkg/a"}
	if got, want := wirePairs(dirs), [][2]string{{"pkg/a/v1", "pkg/a/contract"}}; !slices.Equal(got, want) {
		t.Errorf("wirePairs = %v, want %v", got, want)
	}
	for _, c := range []struct {
		name         string
		graph, tests map[string][]string
		want         int
	}{
		{"both import their parent", map[string][]string{"pkg/a/v1": {"pkg/a"}, "pkg/a/contract": {"pkg/a"}}, nil, 0},
		{"v1 imports contract", map[string][]string{"pkg/a/v1": {"pkg/a/contract"}}, nil, 1},
		{"contract imports a v1 subpackage", map[string][]string{"pkg/a/contract": {"pkg/a/v1/sub"}}, nil, 1},
		{"a contract subpackage imports v1", map[string][]string{"pkg/a/contract/sub": {"pkg/a/v1"}}, nil, 1},
		{"through a third package", map[string][]string{"pkg/a/v1": {"pkg/c"}, "pkg/c": {"pkg/d"}, "pkg/d": {"pkg/a/contract"}}, nil, 1},
		{"a cycle elsewhere", map[string][]string{"pkg/a/v1": {"pkg/c"}, "pkg/c": {"pkg/d"}, "pkg/d": {"pkg/c"}}, nil, 0},
		{"v1's tests import contract", nil, map[string][]string{"pkg/a/v1": {"pkg/a/contract"}}, 1},
		{"v1's tests import a package that links both", map[string][]string{"pkg/c": {"pkg/a/contract", "pkg/a/v1"}},
			map[string][]string{"pkg/a/v1": {"pkg/c"}}, 0},
	} {
		if got := wireCrossings(c.graph, c.tests, "pkg/a/v1", "pkg/a/contract"); len(got) != c.want {
			t.Errorf("%s: crossings %v, want %d", c.name, got, c.want)
		}
	}
}
