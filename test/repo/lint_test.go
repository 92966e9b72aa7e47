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
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The linters `make test` runs (docs/testing.md). These tests read the
// Makefile and the configurations; they never build or run the linters.

// lintConfigs are the two golangci-lint configurations and what each must
// enable: linters, then formatters.
var lintConfigs = map[string][2][]string{
	".golangci.yml": {
		{"errcheck", "govet", "ineffassign", "misspell", "staticcheck", "unparam", "unused"},
		{"goimports"},
	},
	".golangci-kal.yml": {{"kubeapilinter"}, nil},
}

// golangciConfig is the part of a golangci-lint v2 configuration read here.
type golangciConfig struct {
	Version string `json:"version"`
	Run     struct {
		Concurrency int    `json:"concurrency"`
		Timeout     string `json:"timeout"`
	} `json:"run"`
	Linters struct {
		Default string   `json:"default"`
		Enable  []string `json:"enable"`
	} `json:"linters"`
	Formatters struct {
		Enable []string `json:"enable"`
	} `json:"formatters"`
}

// configProblems says what a configuration lacks: every linter and
// formatter of want, a timeout, and a concurrency of 1 or 2 (CI's cores).
func configProblems(name string, raw []byte, want [2][]string) []string {
	var c golangciConfig
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var out []string
	if c.Version != "2" {
		out = append(out, fmt.Sprintf("%s: version %q, want \"2\" (golangci-lint v2)", name, c.Version))
	}
	for _, l := range want[0] {
		if !slices.Contains(c.Linters.Enable, l) {
			out = append(out, fmt.Sprintf("%s: linters.enable lacks %s", name, l))
		}
	}
	for _, f := range want[1] {
		if !slices.Contains(c.Formatters.Enable, f) {
			out = append(out, fmt.Sprintf("%s: formatters.enable lacks %s", name, f))
		}
	}
	if c.Run.Concurrency < 1 || c.Run.Concurrency > 2 {
		out = append(out, fmt.Sprintf("%s: run.concurrency is %d, want 1 or 2 (CI has 2 cores)", name, c.Run.Concurrency))
	}
	if d, err := time.ParseDuration(c.Run.Timeout); err != nil || d <= 0 {
		out = append(out, fmt.Sprintf("%s: run.timeout %q is not a positive duration", name, c.Run.Timeout))
	}
	return out
}

// makeRule returns a Makefile rule's prerequisites and recipe lines.
func makeRule(makefile, target string) (prereqs []string, recipe []string, ok bool) {
	lines := strings.Split(makefile, "\n")
	for i, line := range lines {
		rest, found := strings.CutPrefix(line, target+":")
		if !found {
			continue
		}
		rest, _, _ = strings.Cut(rest, "##")
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "\t") {
				break
			}
			recipe = append(recipe, strings.TrimSpace(l))
		}
		return strings.Fields(rest), recipe, true
	}
	return nil, nil, false
}

// lintRun matches a recipe line that runs the linter binary, with the
// configuration it names, if any.
var lintRun = regexp.MustCompile(`golangci-lint-kal run( --config (\S+))? \S+`)

// wiringProblems says how the Makefile fails to run both configurations
// from `make test`.
func wiringProblems(makefile string) []string {
	var out []string
	prereqs, _, ok := makeRule(makefile, "test")
	if !ok {
		return []string{"the Makefile has no test rule"}
	}
	if !slices.Contains(prereqs, "lint") {
		out = append(out, fmt.Sprintf("`make test` does not depend on lint (prerequisites %q)", prereqs))
	}
	_, recipe, ok := makeRule(makefile, "lint")
	if !ok {
		return append(out, "the Makefile has no lint rule")
	}
	ran := map[string]bool{}
	for _, line := range recipe {
		if m := lintRun.FindStringSubmatch(line); m != nil {
			cfg := m[2]
			if cfg == "" {
				cfg = ".golangci.yml" // what golangci-lint reads by default
			}
			ran[cfg] = true
		}
	}
	for _, cfg := range slices.Sorted(maps.Keys(lintConfigs)) {
		if !ran[cfg] {
			out = append(out, fmt.Sprintf("`make lint` does not run %s (recipe %q)", cfg, recipe))
		}
	}
	return out
}

func TestMakeTestRunsTheLinters(t *testing.T) {
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	problems := wiringProblems(string(makefile))
	for name, want := range lintConfigs {
		raw, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, configProblems(name, raw, want)...)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// nolintDirective is a //nolint comment: the linters it names, then what
// follows them.
var nolintDirective = regexp.MustCompile(`^//nolint(:[\w,-]+)?(.*)$`)

// nolintProblems says which //nolint comments of a Go file name no linter
// or give no reason (docs/testing.md: //nolint:<linter> // <reason>).
func nolintProblems(name, src string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, group := range f.Comments {
		for _, c := range group.List {
			m := nolintDirective.FindStringSubmatch(c.Text)
			if m == nil {
				continue
			}
			at := fset.Position(c.Pos())
			switch reason, ok := strings.CutPrefix(strings.TrimSpace(m[2]), "//"); {
			case m[1] == "":
				out = append(out, fmt.Sprintf("%s:%d: //nolint names no linter", name, at.Line))
			case !ok || strings.TrimSpace(reason) == "":
				out = append(out, fmt.Sprintf("%s:%d: //nolint%s gives no reason", name, at.Line, m[1]))
			}
		}
	}
	return out
}

func TestNolintNamesTheLinterAndWhy(t *testing.T) {
	root := repoRoot(t)
	for _, rel := range repoFiles(t, root, ".go") {
		if inOtherModule(root, path.Dir(rel)) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "//nolint") {
			continue
		}
		for _, p := range nolintProblems(rel, string(src)) {
			t.Error(p)
		}
	}
}

// TestLintCheckers: each broken wiring, configuration or directive is
// reported.
func TestLintCheckers(t *testing.T) {
	const goodMake = "test: lint controlplane ## Run.\n\tgo test ./...\n\nlint: bin/x ## Lint.\n" +
		"\tbin/golangci-lint-kal run ./...\n\tbin/golangci-lint-kal run --config .golangci-kal.yml ./api/...\n"
	const goodConfig = "version: \"2\"\nrun:\n  concurrency: 2\n  timeout: 15m\nlinters:\n  enable: [errcheck]\nformatters:\n  enable: [goimports]\n"
	want := [2][]string{{"errcheck"}, {"goimports"}}
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"wired", wiringProblems(goodMake), nil},
		{"test without lint", wiringProblems(strings.Replace(goodMake, "test: lint ", "test: ", 1)), []string{"does not depend on lint"}},
		{"no lint rule", wiringProblems(strings.Replace(goodMake, "lint: bin/x", "lint-all: bin/x", 1)), []string{"no lint rule"}},
		{"KAL not run", wiringProblems(strings.Replace(goodMake, " --config .golangci-kal.yml", "", 1)), []string{"does not run .golangci-kal.yml"}},
		{"config complete", configProblems("c", []byte(goodConfig), want), nil},
		{"linter missing", configProblems("c", []byte(strings.Replace(goodConfig, "[errcheck]", "[govet]", 1)), want), []string{"lacks errcheck"}},
		{"formatter missing", configProblems("c", []byte(strings.Replace(goodConfig, "[goimports]", "[]", 1)), want), []string{"lacks goimports"}},
		{"all cores", configProblems("c", []byte(strings.Replace(goodConfig, "concurrency: 2", "concurrency: 0", 1)), want), []string{"run.concurrency is 0"}},
		{"no timeout", configProblems("c", []byte(strings.Replace(goodConfig, "  timeout: 15m\n", "", 1)), want), []string{"run.timeout"}},
		{"v1 config", configProblems("c", []byte(strings.Replace(goodConfig, `"2"`, `"1"`, 1)), want), []string{"version"}},
		{"nolint with reason", nolintProblems("f.go", "package p\n\nvar x = 1 //nolint:unused // the reason\n"), nil},
		{"nolint in a string", nolintProblems("f.go", "package p\n\nvar x = \"//nolint\"\n"), nil},
		{"nolint bare", nolintProblems("f.go", "package p\n\nvar x = 1 //nolint\n"), []string{"f.go:3: //nolint names no linter"}},
		{"nolint without why", nolintProblems("f.go", "package p\n\n//nolint:errcheck,unparam\nvar x = 1\n"), []string{"f.go:3: //nolint:errcheck,unparam gives no reason"}},
		{"nolint empty why", nolintProblems("f.go", "package p\n\nvar x = 1 //nolint:unused //\n"), []string{"gives no reason"}},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: problems %q, want %d", c.name, c.got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(c.got[i], w) {
				t.Errorf("%s: problem %q, want one mentioning %q", c.name, c.got[i], w)
			}
		}
	}
}
