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

package printflags_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
)

// parse sets -o on a command's flags and parses it.
func parse(t *testing.T, f *printflags.PrintFlags, args ...string) (printflags.Format, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	f.AddFlags(cmd)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Format()
}

func TestFormatsAndTheOneError(t *testing.T) {
	pf := func() *printflags.PrintFlags {
		return printflags.New(printflags.Table, printflags.Table, printflags.JSON, printflags.YAML, printflags.SVG)
	}
	if got, err := parse(t, pf()); got != printflags.Table || err != nil {
		t.Errorf("no -o: %q %v, want the default table", got, err)
	}
	if got, err := parse(t, pf(), "-o", "svg"); got != printflags.SVG || err != nil {
		t.Errorf("-o svg: %q %v", got, err)
	}
	_, err := parse(t, pf(), "-o", "xml")
	var ue *printflags.UnknownFormatError
	if !errors.As(err, &ue) || err.Error() != `-o must be one of table, json, yaml, svg, got "xml"` {
		t.Errorf("-o xml: %v", err)
	}
	// A default the list does not name (status's table) is not an -o value.
	objects := printflags.New(printflags.Table, printflags.Wide).WithObjects()
	if got, err := parse(t, objects); got != printflags.Table || err != nil {
		t.Errorf("status, no -o: %q %v", got, err)
	}
	_, err = parse(t, printflags.New(printflags.Table, printflags.Wide).WithObjects(), "-o", "table")
	if err == nil || !strings.HasPrefix(err.Error(), "-o must be one of wide, json, yaml, ") || !strings.Contains(err.Error(), "jsonpath") {
		t.Errorf("status -o table: %v", err)
	}
	if u := objects.Usage(); !strings.HasSuffix(u, "(default: the table)") {
		t.Errorf("usage %q does not say the default", u)
	}
}

func TestPrintDispatch(t *testing.T) {
	pf := printflags.New(printflags.Table, printflags.Table, printflags.JSON, printflags.YAML)
	out := printflags.Output{Value: map[string]int{"a": 1}, Writers: map[printflags.Format]printflags.Writer{
		printflags.Table: func(w io.Writer) error { _, err := io.WriteString(w, "A 1\n"); return err },
	}}
	for format, want := range map[printflags.Format]string{printflags.Table: "A 1\n", printflags.JSON: "{\n  \"a\": 1\n}\n", printflags.YAML: "a: 1\n"} {
		var b bytes.Buffer
		if err := pf.Print(&b, format, out); err != nil || b.String() != want {
			t.Errorf("-o %s: %q %v, want %q", format, b.String(), err, want)
		}
	}
	if err := pf.Print(io.Discard, printflags.SVG, out); err == nil {
		t.Error("a format without a printer printed")
	}
}

// API objects print as kubectl get prints them; name prints a list's items.
func TestPrintObjects(t *testing.T) {
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	}
	for format, want := range map[string]string{"name": "configmap/a\nconfigmap/b\n", "jsonpath={.items[*].metadata.name}": "a b"} {
		pf := printflags.New(printflags.Table).WithObjects()
		pf.OutputFormat = format
		f, err := pf.Format()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := pf.Print(&b, f, printflags.Output{Objects: list}); err != nil || b.String() != want {
			t.Errorf("-o %s: %q %v, want %q", format, b.String(), err, want)
		}
	}
}
