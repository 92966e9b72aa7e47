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
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	// mdLink is a Markdown inline link or image: [text](target "title").
	mdLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// pathLike is a word that may name a file or directory: letters, digits
	// and ._-/ with at least one '/' or a ".md" ending.
	pathLike = regexp.MustCompile(`[A-Za-z0-9_.][A-Za-z0-9_./-]*`)
	// url is a scheme://… address; paths inside one are not the repository's.
	url = regexp.MustCompile(`[a-z][a-z0-9+.-]*://\S+`)
)

// fileExts are the endings of files a reference may name; a last segment
// with another dot is a Go identifier (pkg/transferplan.Plan).
var fileExts = []string{".md", ".go", ".yaml", ".yml", ".json", ".txt", ".py", ".sh", ".mod", ".sum", ".toml", ".tsv", ".csv"}

// references finds the repository paths text names: words whose first
// segment is a top-level directory of the repository (pkg/receiver,
// docs/wire.md, hack/boilerplate.go.txt, `./...` patterns trimmed) and bare
// Markdown file names (README.md), which must then be at the top or beside
// the file that names them. Paths
// into other repositories (k8s.io/…, the reference's pd/mooncake/…) do not
// start with a top-level entry and are not checked.
func references(text string, top map[string]bool) []string {
	text = url.ReplaceAllString(text, " ")
	var out []string
	for _, w := range pathLike.FindAllString(text, -1) {
		w = strings.TrimSuffix(strings.TrimRight(w, ".,:;"), "/...")
		w = strings.TrimPrefix(strings.TrimSuffix(w, "/"), "./")
		first, _, nested := strings.Cut(w, "/")
		switch {
		case nested && top[first] && first != "..":
			out = append(out, w)
		case !nested && strings.HasSuffix(w, ".md") && len(w) > len(".md"):
			out = append(out, w)
		}
	}
	return out
}

// exists reports whether the repository holds the path (a file or a
// directory), allowing a trailing Go identifier on a package path.
func exists(root, rel string) bool {
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		return true
	}
	base := path.Base(rel)
	if i := strings.LastIndexByte(base, '.'); i > 0 && !slices.Contains(fileExts, base[i:]) {
		return exists(root, strings.TrimSuffix(rel, base[i:]))
	}
	return false
}

// withoutFencedCode drops the fenced code blocks of a Markdown text: a
// bracket followed by a parenthesis there (a regular expression in an error
// message, say) is not a link.
func withoutFencedCode(md string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
		}
	}
	return b.String()
}

func topLevel(t *testing.T, root string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !skipDirs[e.Name()] {
			top[e.Name()] = true
		}
	}
	return top
}

// A Markdown link, or a path in a Markdown file, names a file or directory
// the repository holds: docs never send a reader to a file that is not
// there (a team's private notes, a file renamed since).
func TestMarkdownNamesOnlyFilesThatExist(t *testing.T) {
	root := repoRoot(t)
	top := topLevel(t, root)
	for _, doc := range repoFiles(t, root, ".md") {
		raw, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutFencedCode(string(raw)), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || url.MatchString(target) || strings.HasPrefix(target, "mailto:") {
				continue
			}
			rel := path.Join(path.Dir(doc), target)
			if strings.HasPrefix(target, "/") {
				rel = strings.TrimPrefix(target, "/")
			}
			if strings.HasPrefix(rel, "../") || !exists(root, rel) {
				t.Errorf("%s links to %s, which is not in the repository", doc, m[1])
			}
		}
		for _, ref := range references(string(raw), top) {
			if !exists(root, ref) && !exists(root, path.Join(path.Dir(doc), ref)) {
				t.Errorf("%s names %s, which is not in the repository", doc, ref)
			}
		}
	}
}

// A Go comment that names a repository path names one that exists.
func TestGoCommentsNameOnlyFilesThatExist(t *testing.T) {
	root := repoRoot(t)
	top := topLevel(t, root)
	for _, file := range repoFiles(t, root, ".go") {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range comments(file, src) {
			for _, ref := range references(c.text, top) {
				if !exists(root, ref) && !exists(root, path.Join(path.Dir(file), ref)) {
					t.Errorf("%s:%d: the comment names %s, which is not in the repository", file, c.line, ref)
				}
			}
		}
	}
}

type comment struct {
	line       int
	start, end int // byte offsets in the file
	text       string
}

// comments are the comments of a Go source file, with their lines and
// offsets.
func comments(name string, src []byte) []comment {
	fset := token.NewFileSet()
	f := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, scanner.ScanComments)
	var out []comment
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			start := f.Offset(pos)
			out = append(out, comment{line: fset.Position(pos).Line, start: start, end: start + len(lit), text: lit})
		}
	}
}

// The checker itself: what it must catch and what it must leave alone.
func TestReferences(t *testing.T) {
	// The missing documents are spelt in pieces, so that no scan of this
	// file (the before-stop hook's among them) takes them for citations.
	missingDoc, missingDocsPage := "WIRE"+".md", "docs/nothing"+".md"
	top := map[string]bool{"pkg": true, "docs": true, "hack": true}
	text := "see " + missingDoc + " and docs/wire.md, `pkg/receiver/...`, pkg/transferplan.Plan, " +
		"hack/boilerplate.go.txt; not go.mod/go.sum, k8s.io/api/core/v1, pd/mooncake/receiver.py, " +
		"https://github.com/x/y/blob/main/pkg/nothing.go or pd.pdtopo.dev/pdpair"
	got := references(text, top)
	want := []string{missingDoc, "docs/wire.md", "pkg/receiver", "pkg/transferplan.Plan", "hack/boilerplate.go.txt"}
	if !slices.Equal(got, want) {
		t.Fatalf("references = %q, want %q", got, want)
	}
	root := repoRoot(t)
	for ref, want := range map[string]bool{
		"pkg/transferplan.Plan": true, "pkg/receiver": true, "hack/boilerplate.go.txt": true, "README.md": true,
		missingDoc: false, missingDocsPage: false, "pkg/nothing.go": false, "pkg/transferplan/nothing.go": false,
	} {
		if got := exists(root, ref); got != want {
			t.Errorf("exists(%s) = %v, want %v", ref, got, want)
		}
	}
}

func TestWithoutFencedCode(t *testing.T) {
	md := "see [the doc](docs/helm.md)\n```\n- at '/x': 'A' does not match '^[a-z]([-a-z]*[a-z])?$'\n```\nand [the readme](README.md)\n"
	var got []string
	for _, m := range mdLink.FindAllStringSubmatch(withoutFencedCode(md), -1) {
		got = append(got, m[1])
	}
	if want := []string{"docs/helm.md", "README.md"}; !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
}
