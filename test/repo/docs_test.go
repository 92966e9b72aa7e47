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
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// section returns the text of a Markdown file's "## title" section, up to
// the next heading of level two.
func section(t *testing.T, md, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("no section %q", "## "+title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// firstFence returns the lines of a text's first fenced code block.
func firstFence(t *testing.T, text string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```")
	if !ok {
		t.Fatal("no fenced code block")
	}
	_, rest, _ = strings.Cut(rest, "\n") // the info string
	body, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatal("an unclosed fenced code block")
	}
	return strings.Split(body, "\n")
}

// mapEntries are the paths a repository map names: the first word of every
// line that does not start with a space (the others continue a description).
func mapEntries(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "" || l[0] == ' ' {
			continue
		}
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

// mapProblems says what is wrong with a repository map against the
// top-level directories: every entry names a directory the repository
// holds, and every top-level directory is the first element of exactly one
// entry.
func mapProblems(entries []string, top []string, isDir func(string) bool) []string {
	var problems []string
	seen := map[string]string{}
	for _, e := range entries {
		p := strings.TrimSuffix(e, "/")
		first, _, _ := strings.Cut(p, "/")
		switch {
		case !strings.HasSuffix(e, "/") || !isDir(p):
			problems = append(problems, e+" is not a directory of the repository")
		case seen[first] != "":
			problems = append(problems, "the map lists "+first+"/ twice ("+seen[first]+", "+e+")")
		case !slices.Contains(top, first):
			problems = append(problems, e+" is not under a top-level directory")
		}
		if seen[first] == "" {
			seen[first] = e
		}
	}
	for _, d := range top {
		if seen[d] == "" {
			problems = append(problems, "the map does not list "+d+"/: add one line saying what it holds")
		}
	}
	return problems
}

// The README's repository map names every top-level directory once (hidden
// ones and build outputs aside), and only directories that exist.
func TestReadmeMapListsEveryTopLevelDirectoryOnce(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := mapEntries(firstFence(t, section(t, string(raw), "Repository")))
	var top []string
	for d := range topLevel(t, root) {
		if !strings.HasPrefix(d, ".") {
			top = append(top, d)
		}
	}
	isDir := func(rel string) bool {
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil && info.IsDir()
	}
	for _, p := range mapProblems(entries, top, isDir) {
		t.Errorf("README.md, ## Repository: %s", p)
	}
}

// The map's rules themselves, on a made-up tree.
func TestMapProblems(t *testing.T) {
	dirs := map[string]bool{"api": true, "api/v1": true, "cmd": true, "pkg": true, "docs": true}
	isDir := func(p string) bool { return dirs[p] }
	top := []string{"api", "cmd", "docs", "pkg"}
	for _, c := range []struct {
		name    string
		entries []string
		want    []string
	}{
		{"complete", []string{"api/v1/", "cmd/", "docs/", "pkg/"}, nil},
		{"twice", []string{"api/", "cmd/", "docs/", "pkg/", "cmd/"}, []string{"lists cmd/ twice"}},
		{"missing", []string{"api/", "cmd/", "pkg/"}, []string{"does not list docs/"}},
		{"absent", []string{"api/", "cmd/", "docs/", "pkg/", "plugins/"}, []string{"plugins/ is not a directory"}},
		{"a file", []string{"api/", "cmd/", "docs/", "pkg/", "README.md"}, []string{"README.md is not a directory"}},
	} {
		got := mapProblems(c.entries, top, isDir)
		if len(got) != len(c.want) {
			t.Errorf("%s: problems %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q, want one mentioning %q", c.name, got[i], w)
			}
		}
	}
}

// conditionTypes are the values of the PDPairConditionType constants the
// API declares, read from the source.
func conditionTypes(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "PDPairConditionType" {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, s)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no PDPairConditionType constants", file)
	}
	return out
}

// tableFirstColumn is the `code` of the first cell of every row of the
// first Markdown table in text.
var tableFirstColumn = regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\|")

// docs/design.md's condition table names every condition type of
// api/v1alpha1/vocabulary.go, and no other.
func TestDesignListsEveryCondition(t *testing.T) {
	root := repoRoot(t)
	want := conditionTypes(t, filepath.Join(root, "api", "v1alpha1", "vocabulary.go"))
	raw, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range tableFirstColumn.FindAllStringSubmatch(section(t, string(raw), "Conditions"), -1) {
		got = append(got, m[1])
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/design.md's ## Conditions table names %v; api/v1alpha1/vocabulary.go declares %v", got, want)
	}
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	htmlID    = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
)

// anchors are the fragments a Markdown file defines: its headings' and
// its explicit <a id="…"> anchors.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	md = withoutFencedCode(md)
	for _, m := range mdHeading.FindAllStringSubmatch(md, -1) {
		out[anchor(m[1])] = true
	}
	for _, m := range htmlID.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"How the plans reach the pod":                        "how-the-plans-reach-the-pod",
		"The decode fleet in the PDPair's status":            "the-decode-fleet-in-the-pdpairs-status",
		"Plans: where they come from and how updates arrive": "plans-where-they-come-from-and-how-updates-arrive",
		"`kubectl pdtopo`: the plugin":                       "kubectl-pdtopo-the-plugin",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// A Markdown link into a section of a document of the repository (a
// fragment after a Markdown file's name, or alone within the file) names a
// heading or anchor that document has: a renamed section breaks the links that send readers to it.
func TestMarkdownSectionLinksExist(t *testing.T) {
	root := repoRoot(t)
	docs := map[string]map[string]bool{}
	read := func(rel string) map[string]bool {
		if a, ok := docs[rel]; ok {
			return a
		}
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil // TestMarkdownNamesOnlyFilesThatExist reports it
		}
		docs[rel] = anchors(string(raw))
		return docs[rel]
	}
	checked := 0
	for _, doc := range repoFiles(t, root, ".md") {
		raw, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutFencedCode(string(raw)), -1) {
			target, frag, ok := strings.Cut(m[1], "#")
			if !ok || url.MatchString(target) || (target != "" && !strings.HasSuffix(target, ".md")) {
				continue
			}
			rel := doc
			if target != "" {
				rel = path.Join(path.Dir(doc), target)
			}
			if a := read(rel); a != nil {
				checked++
				if !a[frag] {
					t.Errorf("%s links to %s, but %s has no heading #%s (it has %v)", doc, m[1], rel, frag, slices.Sorted(maps.Keys(a)))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no section links found: the check checks nothing")
	}
}

// The README's first PDPair is the GQA sample of config/samples, shortened:
// it reads, is compatible, and plans exactly as the sample does.
func TestReadmeFirstPDPairIsTheSample(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	example := strings.Join(firstFence(t, section(t, string(raw), "Your first PDPair")), "\n")
	plan := func(what string, pair *pdv1.PDPair, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		layout, err := tokenspeed.FromSpec(pair.Spec)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		set, err := planv1.Plan(layout)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return set.Hash()
	}
	readme, err := manifest.ReadPDPair(strings.NewReader(example), "")
	got := plan("README.md's first PDPair", readme, err)
	sample, err := manifest.ReadPDPairFile(filepath.Join(root, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml"), "")
	if want := plan("the GQA sample", sample, err); got != want || readme.Name != sample.Name {
		t.Errorf("README.md's first PDPair %s plans to %s; the sample %s to %s", readme.Name, got, sample.Name, want)
	}
}
