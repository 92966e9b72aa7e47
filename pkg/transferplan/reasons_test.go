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

package transferplan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Reasons() must list every constant of type Reason the package declares
// (read from the source, not from the list itself), each once, so that a
// reason added without a line in Reasons() fails here and one added there
// without a mapping fails the controller's reason table test.
func TestReasonsListsEveryReasonConstant(t *testing.T) {
	declared := reasonConstants(t)
	if len(declared) < 9 {
		t.Fatalf("found only %d Reason constants in the source (%v); the parser missed some", len(declared), declared)
	}
	listed := map[Reason]int{}
	for _, r := range Reasons() {
		listed[r]++
	}
	for name, value := range declared {
		if listed[Reason(value)] != 1 {
			t.Errorf("%s (%q) appears %d times in Reasons(), want once", name, value, listed[Reason(value)])
		}
	}
	values := make([]string, 0, len(declared))
	for _, v := range declared {
		values = append(values, v)
	}
	for r := range listed {
		if !slices.Contains(values, string(r)) {
			t.Errorf("Reasons() lists %q, which no Reason constant declares", r)
		}
	}
}

// reasonConstants parses the package's non-test files and returns every
// constant declared with type Reason: name → value.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Reason" {
					continue
				}
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: %s is not a string literal", f, name.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[name.Name] = v
				}
			}
		}
	}
	return out
}
