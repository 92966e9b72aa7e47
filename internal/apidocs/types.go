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

package apidocs

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// typeOf describes a field's type and its constraints in one cell: objects
// link to their section, arrays say what they hold.
func typeOf(path string, s *apiextensionsv1.JSONSchemaProps) string {
	var t string
	switch {
	case s.Type == "object" && len(s.Properties) > 0:
		t = fmt.Sprintf("[object](#%s)", anchor(path))
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		t = "map of " + s.AdditionalProperties.Schema.Type
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		item := s.Items.Schema
		if item.Type == "object" && len(item.Properties) > 0 {
			t = fmt.Sprintf("array of [object](#%s)", anchor(path+"[]"))
		} else {
			t = "array of " + scalar(item)
		}
	default:
		t = scalar(s)
	}
	var notes []string
	notes = append(notes, constraints(s)...)
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil && !(s.Items.Schema.Type == "object" && len(s.Items.Schema.Properties) > 0) {
		for _, c := range constraints(s.Items.Schema) {
			notes = append(notes, "each "+c)
		}
	}
	if len(notes) > 0 {
		t += "; " + strings.Join(notes, "; ")
	}
	return cell(t)
}

func scalar(s *apiextensionsv1.JSONSchemaProps) string {
	t := s.Type
	if t == "" {
		t = "any"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	return t
}

// constraints are the schema's checks on a value, in words.
func constraints(s *apiextensionsv1.JSONSchemaProps) []string {
	var c []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = "`" + rawJSON(e.Raw) + "`"
		}
		c = append(c, "one of "+strings.Join(vals, ", "))
	}
	if s.Default != nil {
		c = append(c, "default `"+rawJSON(s.Default.Raw)+"`")
	}
	if s.Minimum != nil {
		c = append(c, fmt.Sprintf("minimum %s", num(*s.Minimum)))
	}
	if s.Maximum != nil {
		c = append(c, fmt.Sprintf("maximum %s", num(*s.Maximum)))
	}
	if s.MinLength != nil {
		c = append(c, fmt.Sprintf("at least %d characters", *s.MinLength))
	}
	if s.MaxLength != nil {
		c = append(c, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.Pattern != "" {
		c = append(c, "pattern "+code(s.Pattern))
	}
	if s.MinItems != nil {
		c = append(c, fmt.Sprintf("at least %d item(s)", *s.MinItems))
	}
	if s.MaxItems != nil {
		c = append(c, fmt.Sprintf("at most %d item(s)", *s.MaxItems))
	}
	if s.XListType != nil && *s.XListType != "atomic" {
		l := "list type " + *s.XListType
		if len(s.XListMapKeys) > 0 {
			l += " keyed by " + strings.Join(s.XListMapKeys, ", ")
		}
		c = append(c, l)
	}
	// An object's own CEL rules are listed in its section; a scalar's here.
	if s.Type != "object" {
		for _, r := range s.XValidations {
			c = append(c, "rule "+code(strings.Join(strings.Fields(r.Rule), " ")))
		}
	}
	return c
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(f)
}

func rawJSON(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	if s, ok := v.(string); ok {
		return s
	}
	return string(raw)
}

// code shows s as code. A Markdown code span cannot hold a backtick and
// would show "](" (read as a link by tools); those become an HTML <code>
// element whose parentheses and pipes are entities.
func code(s string) string {
	if !strings.Contains(s, "](") && !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "(", "&#40;", ")", "&#41;", "|", "&#124;", "`", "&#96;")
	return "<code>" + r.Replace(s) + "</code>"
}

// paragraph joins a description's lines into one (Markdown table cells and
// list items hold no newlines).
func paragraph(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell escapes what would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func codeList(xs []string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = "`" + x + "`"
	}
	return strings.Join(parts, ", ")
}
