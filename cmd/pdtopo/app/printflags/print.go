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

package printflags

import (
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Writer prints one of a verb's own formats.
type Writer func(io.Writer) error

// Output is a verb's result in every form its formats print.
type Output struct {
	// Value is what json and yaml print: indented JSON, or its YAML.
	Value any
	// Objects is what json, yaml, name and the templates print when the
	// flags print API objects: a list is one document, but for name, one
	// line per item.
	Objects runtime.Object
	// Writers print the verb's own formats (table, wide, svg, dot, raw,
	// configmap); a writer for json or yaml replaces Value's.
	Writers map[Format]Writer
}

// Print writes out in format, a value Format returned.
func (f *PrintFlags) Print(w io.Writer, format Format, out Output) error {
	if write, ok := out.Writers[format]; ok {
		return write(w)
	}
	if p, ok := f.objectPrinter(format); ok && out.Objects != nil {
		return printObjects(w, p, format, out.Objects)
	}
	switch format {
	case JSON, YAML:
		return WriteStructured(w, format, out.Value)
	}
	return fmt.Errorf("no printer for -o %s", format)
}

// printObjects prints API objects with a cli-runtime printer.
func printObjects(w io.Writer, p interface {
	PrintObj(runtime.Object, io.Writer) error
}, format Format, obj runtime.Object) error {
	if format != Name || !meta.IsListType(obj) {
		return p.PrintObj(obj, w)
	}
	// cli-runtime's name printer takes no typed lists.
	items, err := meta.ExtractList(obj)
	if err != nil {
		return err
	}
	for _, item := range items {
		if err := p.PrintObj(item, w); err != nil {
			return err
		}
	}
	return nil
}

// WriteStructured prints v as indented JSON (and a newline) or as YAML.
func WriteStructured(w io.Writer, format Format, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == YAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}
