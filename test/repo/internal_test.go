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
	"sort"
	"strings"
	"testing"
)

// internal/ holds only code a binary uses: every package under internal/ is
// imported, directly or through other packages, by the non-test files of a
// main package of cmd/ or hack/ (the shipped binaries, hack/run-local for
// `make run`, the tools of make targets), test peers left out. Code only
// tests use lives under test/.
func TestInternalHoldsOnlyWhatTheBinariesUse(t *testing.T) {
	root := repoRoot(t)
	pkgs := goPackages(t, root)
	reached := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if reached[dir] {
			return
		}
		reached[dir] = true
		for _, imp := range pkgs[dir] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				visit(rel)
			}
		}
	}
	mains := mainPackages(t, root)
	for _, dir := range mains {
		if _, peer := testPeers[dir]; !peer {
			visit(dir)
		}
	}
	if !reached["internal/localcp"] || !reached["pkg/receiver"] {
		t.Fatalf("from %v the walk did not reach internal/localcp and pkg/receiver: it is broken", mains)
	}
	var unused []string
	for dir := range pkgs {
		if strings.HasPrefix(dir, "internal/") && !reached[dir] {
			unused = append(unused, dir)
		}
	}
	sort.Strings(unused)
	for _, dir := range unused {
		t.Errorf("%s is used by no binary of cmd/ or hack/: code only tests use belongs under test/", dir)
	}
}
