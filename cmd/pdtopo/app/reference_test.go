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
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app"
)

var cliReference = filepath.Join("..", "..", "..", "docs", "cli-reference.md")

// TestReferenceIsCurrent fails when docs/cli-reference.md is not what the
// command tree generates.
func TestReferenceIsCurrent(t *testing.T) {
	var want bytes.Buffer
	if err := app.WriteReference(&want); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(cliReference)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want.Bytes()) {
		t.Fatalf("docs/cli-reference.md is stale: run `make cli-docs` (or `make manifests`) and commit it")
	}
}

// The page names every verb, its flags and its formats.
func TestReferenceListsEveryVerb(t *testing.T) {
	var b bytes.Buffer
	if err := app.WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	root := app.NewRootCommand(genericclioptions.IOStreams{})
	for _, c := range root.Commands() {
		if !strings.Contains(page, "\n## pdtopo "+c.Name()+"\n") {
			t.Errorf("no section for %s", c.Name())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(page, "--"+f.Name) {
				t.Errorf("%s: flag --%s is not on the page", c.Name(), f.Name)
			}
		})
	}
	for _, want := range []string{"`table` (default), `json`, `yaml`, `svg`, `dot`", "`raw` (default), `json`, `yaml`, `configmap`", "`wide`, `json`, `yaml`", "--kubeconfig", "--max-plan-fragments"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if home, _ := os.UserHomeDir(); home != "" && home != "/" && strings.Contains(page, home+"/") {
		t.Errorf("the page names this machine's home directory %s", home)
	}
}
