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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// indexEntry is a line of docs/README.md's lists: "- [text](page): what it is for".
var indexEntry = regexp.MustCompile(`^- \[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)`)

// indexProblems says what is wrong with the docs index against the pages of
// docs/: every page is the target of exactly one entry, and every entry
// names a page.
func indexProblems(index string, pages []string) []string {
	var problems []string
	seen := map[string]int{}
	for line := range strings.Lines(index) {
		if m := indexEntry.FindStringSubmatch(line); m != nil {
			seen[m[1]]++
		}
	}
	for _, p := range pages {
		switch seen[p] {
		case 0:
			problems = append(problems, p+" is not listed: add one line under the heading it belongs to saying what it is for")
		case 1:
		default:
			problems = append(problems, p+" is listed more than once")
		}
	}
	for target := range seen {
		if !slices.Contains(pages, target) {
			problems = append(problems, target+" is listed but is not a page of docs/")
		}
	}
	slices.Sort(problems)
	return problems
}

// The docs index (docs/README.md) lists every page of docs/ once, under
// Concepts, Tasks, Reference or Troubleshooting, so a new page cannot be
// added without a place a reader finds it.
func TestDocsIndexListsEveryPageOnce(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, heading := range []string{"Concepts", "Tasks", "Reference", "Troubleshooting"} {
		section(t, string(raw), heading)
	}
	entries, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "README.md" {
			pages = append(pages, e.Name())
		}
	}
	// A section's folder (docs/engines/) holds pages too; docs/img/ holds none.
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "img" {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(root, "docs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sub {
			if !f.IsDir() && strings.HasSuffix(f.Name(), ".md") {
				pages = append(pages, e.Name()+"/"+f.Name())
			}
		}
	}
	if len(pages) < 10 {
		t.Fatalf("found only %v in docs/: the walk is broken", pages)
	}
	for _, p := range indexProblems(string(raw), pages) {
		t.Errorf("docs/README.md: %s", p)
	}
}

// The index's rules themselves.
func TestIndexProblems(t *testing.T) {
	pages := []string{"a.md", "b.md"}
	for name, c := range map[string]struct {
		index string
		want  int
	}{
		"complete":      {"- [a](a.md): x\n- [b](b.md): y\n", 0},
		"missing":       {"- [a](a.md): x\n", 1},
		"twice":         {"- [a](a.md): x\n- [a](a.md#s): again\n- [b](b.md): y\n", 1},
		"not a page":    {"- [a](a.md): x\n- [b](b.md): y\n- [c](c.md): z\n", 1},
		"prose ignored": {"see [a](a.md)\n- [a](a.md): x\n- [b](b.md): y\n", 0},
	} {
		if got := indexProblems(c.index, pages); len(got) != c.want {
			t.Errorf("%s: %v, want %d problems", name, got, c.want)
		}
	}
}
