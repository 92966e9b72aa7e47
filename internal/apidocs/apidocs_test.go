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

package apidocs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/internal/apidocs"
)

var (
	crdDir    = filepath.Join("..", "..", "config", "crd", "bases")
	reference = filepath.Join("..", "..", "docs", "api-reference.md")
)

func generate(t *testing.T) string {
	t.Helper()
	docs, err := apidocs.ReadCRDs(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := apidocs.Write(&b, docs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReferenceIsCurrent fails when docs/api-reference.md is not what the
// committed CRD (itself checked against the types by api/v1alpha1's tests)
// generates.
func TestReferenceIsCurrent(t *testing.T) {
	have, err := os.ReadFile(reference)
	if err != nil {
		t.Fatal(err)
	}
	if want := generate(t); string(have) != want {
		t.Fatalf("docs/api-reference.md is stale: run `make api-docs` (or `make manifests`) and commit it")
	}
}

// TestEveryFieldHasARow walks the CRD's schema on its own and checks that
// every field of spec and status is a row of its object's section.
func TestEveryFieldHasARow(t *testing.T) {
	doc := generate(t)
	b, err := os.ReadFile(filepath.Join(crdDir, "pd.pdtopo.dev_pdpairs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	fields := 0
	var walk func(path string, s apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s apiextensionsv1.JSONSchemaProps) {
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", *s.Items.Schema)
			return
		}
		if len(s.Properties) == 0 {
			return
		}
		sec := sectionOf(doc, path)
		if sec == "" {
			t.Errorf("no section for %s", path)
			return
		}
		for name, p := range s.Properties {
			fields++
			if !strings.Contains(sec, "| `"+name+"` |") {
				t.Errorf("section %s has no row for %s", path, name)
			}
			walk(path+"."+name, p)
		}
	}
	walk("spec", root.Properties["spec"])
	walk("status", root.Properties["status"])
	if fields < 40 {
		t.Errorf("only %d fields walked; the schema is larger", fields)
	}
	if strings.Contains(doc, "### `metadata") {
		t.Errorf("metadata (Kubernetes' ObjectMeta) is documented as our own")
	}
}

// sectionOf is the text of the section titled path, up to the next one.
func sectionOf(doc, path string) string {
	i := strings.Index(doc, "### `"+path+"`\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+1:]
	if j := strings.Index(rest, "\n### "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestConstraintsAndRules: values written out from the markers in
// api/v1alpha1 (+kubebuilder:default=1, Minimum=1, Maximum=65536; the Enum of
// AttentionBackend; the dataParallelSize CEL rule and its message).
func TestConstraintsAndRules(t *testing.T) {
	doc := generate(t)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile("(?m)^\\| `tokensPerPage` \\| integer \\(int32\\); default `1`; minimum 1; maximum 65536 \\|  \\| tokensPerPage is"),
		regexp.MustCompile("(?m)^\\| `attentionBackend` \\| string; one of `MHA`, `MLA`; default `MHA` \\|"),
		regexp.MustCompile("(?m)^\\| `prefill` \\| \\[object\\]\\(#spec-prefill\\) \\| yes \\|"),
		regexp.MustCompile("(?m)^- `!has\\(self.dataParallelSize\\) \\|\\| self.dataParallelSize < 1 \\|\\| self.tensorParallelSize % self.dataParallelSize == 0` \\(on `.dataParallelSize`\\): dataParallelSize must divide tensorParallelSize$"),
		regexp.MustCompile("(?m)^\\| Compatible \\| string \\| 0 \\| `.status.conditions\\[\\?\\(@.type==\"LayoutCompatible\"\\)\\].status` \\|$"),
		regexp.MustCompile("(?m)^<a id=\"spec-kvbuffers\"></a>\n\n### `spec.kvBuffers\\[\\]`$"),
	} {
		if !want.MatchString(doc) {
			t.Errorf("reference lacks %s", want)
		}
	}
	// The only links are to the reference's own sections: a "](" inside a
	// pattern would read as a link to tools (and to test/repo).
	if bad := regexp.MustCompile(`\]\([^#]`).FindString(doc); bad != "" {
		t.Errorf("reference holds %q outside a link to a section", bad)
	}
	if !strings.Contains(doc, "pattern <code>^[A-Za-z]&#40;[A-Za-z0-9_,:]*[A-Za-z0-9_]&#41;?$</code>") {
		t.Errorf("condition reason pattern not shown as HTML code")
	}
	// Table rows stay rows: no cell may hold an unescaped pipe or a newline.
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 5 {
			t.Errorf("broken table row: %s", line)
		}
	}
}

func TestRefusesWhatIsNotACRD(t *testing.T) {
	var b bytes.Buffer
	for _, in := range []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "{[", "kind: CustomResourceDefinition\nspec:\n  bogus: 1\n"} {
		if err := apidocs.Write(&b, [][]byte{[]byte(in)}); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
	if _, err := apidocs.ReadCRDs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.yaml CRD") {
		t.Errorf("empty dir: %v", err)
	}
}
