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

package pairplans

import (
	"fmt"
	"io"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/internal/topograph"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// IsPicture: svg and dot draw the plans.
func IsPicture(format printflags.Format) bool {
	return format == printflags.SVG || format == printflags.DOT
}

// Pictures are the svg and dot writers of a plan set.
func Pictures(name string, set *transferplan.PlanSet) map[printflags.Format]printflags.Writer {
	return map[printflags.Format]printflags.Writer{
		printflags.SVG: func(w io.Writer) error { return writePicture(w, printflags.SVG, name, set) },
		printflags.DOT: func(w io.Writer) error { return writePicture(w, printflags.DOT, name, set) },
	}
}

// writePicture draws the plan set as SVG or Graphviz DOT.
func writePicture(w io.Writer, format printflags.Format, name string, set *transferplan.PlanSet) error {
	// vLLM's and SGLang's sets are their rank maps: topograph draws which
	// prefill ranks each decode rank reads, without bytes.
	g, err := topograph.Build(name, set)
	if err != nil {
		return err
	}
	if format == printflags.DOT {
		return topograph.WriteDOT(w, g)
	}
	return topograph.WriteSVG(w, g)
}

// incompatibleResult is what -o json|yaml prints for a layout that cannot be planned.
type incompatibleResult struct {
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	// Fix is the end of Message: the change that would make the pair plannable.
	Fix string `json:"fix"`
}

// Incompatible prints the verdict on a layout that cannot be planned and
// ends the command with exit 3. There is no picture of plans that do not
// exist: for svg and dot the verdict goes to standard error, so that a
// redirected .svg file is not left holding text.
func Incompatible(w io.Writer, pf *printflags.PrintFlags, format printflags.Format, le *transferplan.LayoutError) error {
	if IsPicture(format) {
		return cli.Exitf(cli.ExitIncompatible, "INCOMPATIBLE %s: %s", le.Reason, le.Message)
	}
	out := printflags.Output{
		Value: incompatibleResult{Compatible: false, Reason: string(le.Reason), Message: le.Message, Fix: le.Fix},
		Writers: map[printflags.Format]printflags.Writer{printflags.Table: func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "INCOMPATIBLE  %s\n  %s\n", le.Reason, le.Message)
			return err
		}},
	}
	if err := pf.Print(w, format, out); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	return cli.ErrIncompatible
}

// TargetRole is how a table names a target: a source, or a dummy.
func TargetRole(t transferplan.PlanTarget) string {
	if t.IsDummy {
		return "dummy"
	}
	return "source"
}
