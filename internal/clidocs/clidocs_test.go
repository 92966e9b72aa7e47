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

package clidocs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pdtopo/pdtopo/internal/clidocs"
)

// A verb's section: usage, help with its indented block as code, escaped
// cells, formats with the default marked.
func TestWriteAVerb(t *testing.T) {
	root := &cobra.Command{Use: "tool", Long: "The tool."}
	root.PersistentFlags().String("kubeconfig", "", "the kubeconfig")
	verb := &cobra.Command{Use: "show (-f FILE|-)", Short: "Show a thing", Long: "Show it:\n\n  --a  the a\n\nwith <role> named.",
		Example: "  tool show -f x", RunE: func(*cobra.Command, []string) error { return nil }}
	verb.Flags().StringP("output", "o", "table", "output format: table, json")
	_ = verb.Flags().SetAnnotation("output", "formats", []string{"table", "json"})
	verb.Flags().String("filename", "", "a file | or -")
	root.AddCommand(verb)
	var b bytes.Buffer
	if err := clidocs.Write(&b, root, clidocs.Options{FormatsAnnotation: "formats"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"# `tool` command reference\n",
		"| [`show`](#tool-show) | Show a thing | `table` (default), `json` |\n",
		"| `--kubeconfig string` |  | the kubeconfig |\n",
		"## tool show\n\nShow a thing.\n\n```\ntool show (-f FILE|-) [flags]\n```\n",
		"```\n  --a  the a\n```\n\nwith &lt;role&gt; named.\n",
		"```sh\ntool show -f x\n```\n",
		"| `--filename string` |  | a file \\| or - |\n",
		"| `-o, --output string` | `table` | output format: table, json |\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "\n\n\n") || strings.Contains(page, "--kubeconfig string` |  | the kubeconfig |\n| `--filename") {
		t.Errorf("blank lines or flags out of place:\n%s", page)
	}
}
