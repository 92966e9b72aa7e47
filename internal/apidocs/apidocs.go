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

// Package apidocs writes the API reference (Markdown) of a CRD from its
// OpenAPI v3 schema: the CRD controller-gen generates from the types'
// markers, so the reference says exactly what the API server enforces
// (types, enums, defaults, bounds, CEL rules) with the types' doc comments.
package apidocs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Header is the first line of the generated file.
const Header = "<!-- Generated from config/crd/bases by `make api-docs` (hack/api-docs); do not edit. internal/apidocs tests fail when it is stale. -->"

// Write renders the reference of the CRDs (YAML documents, in order).
func Write(w io.Writer, crdYAML [][]byte) error {
	var b strings.Builder
	b.WriteString(Header + "\n\n# API reference\n\n")
	for _, doc := range crdYAML {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return fmt.Errorf("apidocs: not a CustomResourceDefinition: %w", err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return fmt.Errorf("apidocs: kind %q, want CustomResourceDefinition", crd.Kind)
		}
		if err := writeCRD(&b, &crd); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCRD(b *strings.Builder, crd *apiextensionsv1.CustomResourceDefinition) error {
	n := crd.Spec.Names
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return fmt.Errorf("apidocs: %s version %s has no schema", crd.Name, v.Name)
		}
		root := v.Schema.OpenAPIV3Schema
		fmt.Fprintf(b, "## %s (`%s/%s`)\n\n", n.Kind, crd.Spec.Group, v.Name)
		fmt.Fprintf(b, "%s, kind `%s` (list `%s`), resource `%s`", scope(crd.Spec.Scope), n.Kind, n.ListKind, n.Plural)
		if len(n.ShortNames) > 0 {
			fmt.Fprintf(b, ", short names %s", codeList(n.ShortNames))
		}
		if len(n.Categories) > 0 {
			fmt.Fprintf(b, ", categories %s", codeList(n.Categories))
		}
		b.WriteString(".")
		if v.Subresources != nil && v.Subresources.Status != nil {
			b.WriteString(" `status` is a subresource: the operator writes it, users write `spec`.")
		}
		b.WriteString("\n\n")
		if d := paragraph(root.Description); d != "" {
			b.WriteString(d + "\n\n")
		}
		writeRules(b, root)
		writeColumns(b, v.AdditionalPrinterColumns)
		var sections []section
		collect(&sections, "", root)
		for _, s := range sections {
			writeSection(b, s)
		}
	}
	return nil
}

func scope(s apiextensionsv1.ResourceScope) string {
	if s == apiextensionsv1.NamespaceScoped {
		return "Namespaced"
	}
	return "Cluster-scoped"
}

func writeColumns(b *strings.Builder, cols []apiextensionsv1.CustomResourceColumnDefinition) {
	if len(cols) == 0 {
		return
	}
	b.WriteString("`kubectl get` columns (priority 1 only with `-o wide`):\n\n| Column | Type | Priority | JSONPath |\n| --- | --- | --- | --- |\n")
	for _, c := range cols {
		fmt.Fprintf(b, "| %s | %s | %d | `%s` |\n", c.Name, c.Type, c.Priority, cell(c.JSONPath))
	}
	b.WriteString("\n")
}

// section is one object of the schema: the root's spec and status and every
// object nested in them, named by its path ("spec.kvBuffers[]").
type section struct {
	path   string
	schema *apiextensionsv1.JSONSchemaProps
}

// collect walks objects depth-first in field order (spec before status),
// skipping metadata, whose schema is Kubernetes' own ObjectMeta.
func collect(out *[]section, path string, s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		collect(out, path+"[]", s.Items.Schema)
		return
	}
	if s.Type != "object" || len(s.Properties) == 0 {
		return
	}
	if path != "" {
		*out = append(*out, section{path: path, schema: s})
	}
	for _, name := range fieldOrder(path, s) {
		if path == "" && (name == "metadata" || name == "apiVersion" || name == "kind") {
			continue
		}
		p := s.Properties[name]
		collect(out, join(path, name), &p)
	}
}

// fieldOrder is alphabetical, except that the root lists spec before status.
func fieldOrder(path string, s *apiextensionsv1.JSONSchemaProps) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if path == "" {
			return rootRank(names[i]) < rootRank(names[j]) || rootRank(names[i]) == rootRank(names[j]) && names[i] < names[j]
		}
		return names[i] < names[j]
	})
	return names
}

func rootRank(n string) int {
	switch n {
	case "apiVersion", "kind", "metadata":
		return 0
	case "spec":
		return 1
	case "status":
		return 2
	}
	return 3
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func anchor(path string) string {
	r := strings.NewReplacer(".", "-", "[]", "")
	return strings.ToLower(r.Replace(path))
}

func writeSection(b *strings.Builder, s section) {
	fmt.Fprintf(b, "<a id=\"%s\"></a>\n\n### `%s`\n\n", anchor(s.path), s.path)
	if d := paragraph(s.schema.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	writeRules(b, s.schema)
	required := map[string]bool{}
	for _, r := range s.schema.Required {
		required[r] = true
	}
	b.WriteString("| Field | Type | Required | Description |\n| --- | --- | --- | --- |\n")
	for _, name := range fieldOrder(s.path, s.schema) {
		p := s.schema.Properties[name]
		req := ""
		if required[name] {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", name, typeOf(join(s.path, name), &p), req, cell(paragraph(p.Description)))
	}
	b.WriteString("\n")
}

// writeRules lists the CEL rules the API server evaluates on an object.
func writeRules(b *strings.Builder, s *apiextensionsv1.JSONSchemaProps) {
	if len(s.XValidations) == 0 {
		return
	}
	b.WriteString("Validation rules (CEL, enforced by the API server):\n\n")
	for _, r := range s.XValidations {
		fmt.Fprintf(b, "- %s", code(strings.Join(strings.Fields(r.Rule), " ")))
		if r.FieldPath != "" {
			fmt.Fprintf(b, " (on `%s`)", r.FieldPath)
		}
		switch {
		case r.Message != "":
			fmt.Fprintf(b, ": %s", paragraph(r.Message))
		case r.MessageExpression != "":
			// The message is built when the rule fails (it names the
			// engine of the object): show the expression that builds it.
			fmt.Fprintf(b, ": the message is %s", code(strings.Join(strings.Fields(r.MessageExpression), " ")))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// ReadCRDs reads every *.yaml file of dir, in name order.
func ReadCRDs(dir string) ([][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("apidocs: no *.yaml CRD in %s", dir)
	}
	sort.Strings(files)
	var docs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return docs, nil
}
