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

// Package graph is `pdtopo graph`: `plan -o svg|dot` under the name people
// look for, with svg as the default.
package graph

import (
	"github.com/spf13/cobra"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/plan"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
)

// NewCommand is `graph`.
func NewCommand(env *cli.Env) *cobra.Command {
	pf := printflags.New(printflags.SVG, printflags.SVG, printflags.DOT)
	o := plan.NewOptions(env, pf)
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
		RunE: o.Run,
	}
	cmd.Flags().StringVarP(&o.File, "filename", "f", "", "PDPair manifest instead of a cluster PDPair: a file, a directory or - for standard input")
	pf.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Name, "name", "", "with -f: the PDPair to draw when the manifest holds several")
	return cmd
}
