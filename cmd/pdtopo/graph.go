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

package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/internal/topograph"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

var graphOutputs = []string{"svg", "dot"}

func isPicture(output string) bool { return output == "svg" || output == "dot" }

// writePicture draws the plan set as SVG or Graphviz DOT.
func writePicture(w io.Writer, output, name string, set *transferplan.PlanSet) error {
	g, err := topograph.Build(name, set)
	if err != nil {
		return err
	}
	if output == "dot" {
		return topograph.WriteDOT(w, g)
	}
	return topograph.WriteSVG(w, g)
}

// newGraphCommand is `graph`: `plan NAME -o svg|dot` under the name people
// look for, with svg as the default.
func newGraphCommand(kube *genericclioptions.ConfigFlags, streams genericclioptions.IOStreams) *cobra.Command {
	o := &planOptions{kube: kube, streams: streams}
	cmd := &cobra.Command{
		Use:   "graph (NAME | -f FILE|DIR|- [--name NAME]) [-o svg|dot]",
		Short: "Draw which decode rank pulls how many bytes from which prefill rank (SVG or Graphviz DOT)",
		Long: `Draw a PDPair's transfer topology: prefill TP ranks in the left column, decode
TP ranks in the right, one edge per target labelled with the bytes it moves
per page, dummy targets dashed, idle prefill ranks marked with the decode rank
that covers them, DP groups boxed. Beyond 64 ranks a side, consecutive ranks
are aggregated into one node and the picture says so.

With NAME the plans are the ones the operator published (or planned from the
spec when none are, which is noted on standard error); with -f they are
planned from a manifest.`,
		Example: `  kubectl pdtopo graph llama3-70b-gqa-p8-d4 > gqa.svg
  pdtopo graph -f config/samples/pd_v1alpha1_pdpair_mla_p16_d8.yaml -o dot | dot -Tpng > mla.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(graphOutputs, o.output) {
				return usageErrorf("-o must be one of %s, got %q", strings.Join(graphOutputs, ", "), o.output)
			}
			return o.run(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "PDPair manifest instead of a cluster PDPair: a file, a directory or - for standard input")
	cmd.Flags().StringVarP(&o.output, "output", "o", "svg", "output format: "+strings.Join(graphOutputs, ", "))
	cmd.Flags().StringVar(&o.name, "name", "", "with -f: the PDPair to draw when the manifest holds several")
	return cmd
}
