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

package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app"
)

// exitCodes are the values of package cli's Exit… constants, read from its
// source: every code the command can exit with.
func exitCodes(t *testing.T) []int {
	t.Helper()
	names, err := filepath.Glob("cli/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var codes []int
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						t.Fatalf("%s is not an integer literal", name.Name)
					}
					n, _ := strconv.Atoi(lit.Value)
					codes = append(codes, n)
				}
			}
		}
	}
	if len(codes) == 0 {
		t.Fatal("no Exit… constants in package cli")
	}
	slices.Sort(codes)
	return codes
}

// exitRow is a row of the exit status table: | code | meaning |.
var exitRow = regexp.MustCompile(`(?m)^\| (\d+) \| \S`)

// The exit status table of docs/kubectl-plugin.md and the root command's
// help list every code the command exits with, and no other.
func TestExitCodesAreDocumented(t *testing.T) {
	want := exitCodes(t)
	raw, err := os.ReadFile("../../../docs/kubectl-plugin.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n## Exit status\n")
	if !ok {
		t.Fatal("docs/kubectl-plugin.md has no ## Exit status section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var documented []int
	for _, m := range exitRow.FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	slices.Sort(documented)
	if !slices.Equal(documented, want) {
		t.Errorf("docs/kubectl-plugin.md's exit status table lists %v; the command exits with %v", documented, want)
	}

	root := app.NewRootCommand(genericclioptions.IOStreams{})
	_, help, ok := strings.Cut(root.Long, "Exit status:")
	if !ok {
		t.Fatal("the root command's help has no Exit status")
	}
	for _, code := range want {
		if !regexp.MustCompile(`(^|[ \n,])` + strconv.Itoa(code) + ` `).MatchString(help) {
			t.Errorf("the root command's help does not explain exit status %d:%s", code, help)
		}
	}
}
