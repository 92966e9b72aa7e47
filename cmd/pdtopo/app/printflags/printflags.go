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

// Package printflags is the -o of every pdtopo verb that has one: one
// PrintFlags type a verb configures with the formats it supports, one parser
// with one error for an unknown format, and one printer dispatch (Print).
// The structured formats print a verb's value as indented JSON or as YAML,
// or, for a verb printing API objects (status), as kubectl get does with
// cli-runtime's printers (json, yaml, name and the templates); a verb's own
// formats (table, wide, svg, dot, raw, configmap) are writers it hands over.
package printflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// Format is one value of -o.
type Format string

// The formats of the verbs. JSON and YAML are the structured ones; Name and
// the templates print API objects; the others are a verb's own writers.
const (
	Table     Format = "table"     // for people: the verb's table
	Wide      Format = "wide"      // the table with more columns
	JSON      Format = "json"      // indented JSON
	YAML      Format = "yaml"      // the JSON as YAML
	Name      Format = "name"      // one RESOURCE/NAME line per object
	SVG       Format = "svg"       // the topology picture
	DOT       Format = "dot"       // the topology as Graphviz DOT
	Raw       Format = "raw"       // the bytes as their source gave them
	ConfigMap Format = "configmap" // a ConfigMap holding the output
)

// PrintFlags is a verb's -o flag: the formats it allows and which one an
// empty -o means.
type PrintFlags struct {
	// OutputFormat is the flag's value.
	OutputFormat string
	// defaultFormat is printed when -o is empty; when it is not among
	// formats, -o defaults to "" (status: the table, which -o does not name).
	defaultFormat Format
	formats       []Format
	// objects, when set, prints json, yaml, name and the templates as
	// kubectl get does, with cli-runtime's printers.
	objects *genericclioptions.PrintFlags
	// note ends the flag's usage.
	note string
}

// New is -o with the formats, in the order the help lists them; an empty
// -o is defaultFormat.
func New(defaultFormat Format, formats ...Format) *PrintFlags {
	f := &PrintFlags{defaultFormat: defaultFormat, formats: formats}
	if slices.Contains(formats, defaultFormat) {
		f.OutputFormat = string(defaultFormat)
	}
	return f
}

// WithObjects makes json, yaml and name (and the templates: go-template,
// jsonpath, … with --template) print the Output's Objects as kubectl get
// prints them.
func (f *PrintFlags) WithObjects() *PrintFlags {
	f.objects = genericclioptions.NewPrintFlags("")
	f.objects.OutputFormat = &f.OutputFormat
	return f
}

// WithNote ends the flag's usage with note, e.g. "(svg and dot draw the topology)".
func (f *PrintFlags) WithNote(note string) *PrintFlags {
	f.note = note
	return f
}

// Allowed are the formats -o takes, in the order the help lists them.
func (f *PrintFlags) Allowed() []string {
	out := make([]string, 0, len(f.formats))
	for _, format := range f.formats {
		out = append(out, string(format))
	}
	if f.objects != nil {
		for _, format := range f.objects.AllowedFormats() {
			if !slices.Contains(out, format) {
				out = append(out, format)
			}
		}
	}
	return out
}

// Usage is the -o flag's help line.
func (f *PrintFlags) Usage() string {
	s := "output format: " + strings.Join(f.Allowed(), ", ")
	if !slices.Contains(f.formats, f.defaultFormat) {
		s += fmt.Sprintf(" (default: the %s)", f.defaultFormat)
	}
	if f.note != "" {
		s += " " + f.note
	}
	return s
}

// AddFlags registers -o (and, for API objects, kubectl's --template,
// --show-managed-fields and --allow-missing-template-keys) on cmd.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	if f.objects != nil {
		f.objects.JSONYamlPrintFlags.AddFlags(cmd)
		f.objects.NamePrintFlags.AddFlags(cmd)
		f.objects.TemplatePrinterFlags.AddFlags(cmd)
		f.objects.OutputFlagSpecified = func() bool { return cmd.Flag("output").Changed }
	}
	cmd.Flags().StringVarP(&f.OutputFormat, "output", "o", f.OutputFormat, f.Usage())
	// The reference page (docs/cli-reference.md) lists each verb's formats.
	_ = cmd.Flags().SetAnnotation("output", FormatsAnnotation, f.Allowed())
	_ = cmd.Flags().SetAnnotation("output", DefaultAnnotation, []string{string(f.defaultFormat)})
}

// FormatsAnnotation and DefaultAnnotation are the annotations of a verb's
// -o flag listing its formats and naming the one an empty -o prints, for
// the generated reference page.
const (
	FormatsAnnotation = "pdtopo.dev/output-formats"
	DefaultAnnotation = "pdtopo.dev/output-default"
)

// UnknownFormatError is an -o no format of the verb has.
type UnknownFormatError struct {
	Got     string
	Allowed []string
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("-o must be one of %s, got %q", strings.Join(e.Allowed, ", "), e.Got)
}

// Format parses -o: one of the verb's formats, the default for an empty
// -o, or, for API objects, one cli-runtime prints (a template format keeps
// its argument: "jsonpath={.items[*].metadata.name}").
func (f *PrintFlags) Format() (Format, error) {
	switch got := Format(f.OutputFormat); {
	case got == "":
		return f.defaultFormat, nil
	case slices.Contains(f.formats, got):
		return got, nil
	case f.objects != nil:
		if _, err := f.objects.ToPrinter(); err == nil {
			return got, nil
		}
	}
	return "", &UnknownFormatError{Got: f.OutputFormat, Allowed: f.Allowed()}
}

// objectPrinter is cli-runtime's printer of format.
func (f *PrintFlags) objectPrinter(format Format) (printers.ResourcePrinter, bool) {
	if f.objects == nil || slices.Contains([]Format{Table, Wide, SVG, DOT, Raw, ConfigMap}, format) {
		return nil, false
	}
	saved := f.OutputFormat
	f.OutputFormat = string(format)
	defer func() { f.OutputFormat = saved }()
	p, err := f.objects.ToPrinter()
	return p, err == nil
}
