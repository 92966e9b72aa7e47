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

// Package plan is `pdtopo plan`: a PDPair's verdict and every decode TP
// rank's route plan, from a manifest (offline) or from the cluster (its
// conditions, then the plans the operator published). graph runs it with
// the pictures only.
package plan

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Options are a plan (or graph) invocation's flags.
type Options struct {
	env   *cli.Env
	print *printflags.PrintFlags
	// format is -o, parsed.
	format printflags.Format
	// File is -f, Name --name, HFConfig --hf-config.
	File     string
	Name     string
	HFConfig string
}

// NewOptions are the options of a verb printing plans in print's formats.
func NewOptions(env *cli.Env, print *printflags.PrintFlags) *Options {
	return &Options{env: env, print: print}
}

// NewCommand is `plan`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := NewOptions(env, printflags.New(printflags.Table, printflags.Table, printflags.JSON, printflags.YAML, printflags.SVG, printflags.DOT).
		WithNote("(svg and dot draw the topology)"))
	cmd := &cobra.Command{
		Use:   "plan (-f FILE|DIR|- [--name NAME] | NAME)",
		Short: "Validate a PDPair and print every decode TP rank's route plan",
		Long: `Validate a PDPair and print every decode TP rank's route plan.

With -f, the PDPair is read from a manifest (a file, every *.yaml, *.yml and
*.json file of a directory, or standard input) and planned offline; other
objects beside it (an application's Deployments, Services, …) are skipped,
and named on standard error. With NAME,
the PDPair is read from the cluster: its conditions, then its plans as the
operator published them (or as planned from its spec when they are not
published, which the output says).

Exit status: 0 compatible, 2 unreadable, missing or invalid PDPair, 3
incompatible layout, 4 the cluster could not be read, 5 the plans are past
the plan budget (sized before planning; --max-plan-fragments and
--max-plan-bytes raise it).`,
		Example: `  pdtopo plan -f config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml
  pdtopo plan -f config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml -o svg > gqa.svg
  pdtopo plan -f config/samples --name llama3-70b-gqa-p8-d4 -o json
  kubectl pdtopo plan llama3-70b-gqa-p8-d4 -n llm`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd, args) },
	}
	cmd.Flags().StringVarP(&o.File, "filename", "f", "", "PDPair manifest: a YAML or JSON file, a directory of them, or - for standard input")
	o.print.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Name, "name", "", "with -f: the PDPair to plan when the manifest holds several")
	cmd.Flags().StringVar(&o.HFConfig, "hf-config", "", "with -f: the config.json of a model-aware PDPair whose spec.model names a ConfigMap (configMapKeyRef)")
	return cmd
}

// Run plans the PDPair of -f or of the NAME in args.
func (o *Options) Run(cmd *cobra.Command, args []string) error {
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	o.format = format
	switch {
	case o.File != "" && len(args) > 0:
		return cli.UsageErrorf("give -f FILE|DIR|- or a PDPair NAME, not both")
	case o.File == "" && len(args) == 0:
		return cli.UsageErrorf("-f FILE|DIR|- or a PDPair NAME is required")
	case len(args) > 0 && o.Name != "":
		return cli.UsageErrorf("--name picks a PDPair from a manifest (-f); in the cluster give the NAME alone")
	case len(args) > 0:
		return o.runCluster(cmd, args[0])
	}
	config, err := cli.ReadHFConfig(o.HFConfig)
	if err != nil {
		return err
	}
	streams := o.env.Streams
	pair, err := cli.ReadPair(o.File, o.Name, streams.In, streams.ErrOut)
	if err != nil {
		return cli.UsageErrorf("%v", err)
	}
	if eng := engines.For(pair.Spec); eng.ReadsContracts(pair.Spec) {
		return o.runContract(eng, pair)
	}
	pairName, p, verdict, err := pairplans.ResolvePair(o.File, pair, config)
	if err != nil {
		return cli.UsageErrorf("%v", err)
	}
	if verdict != nil {
		return o.emit(pairName, o.File, nil, nil, verdict)
	}
	set, err := pairplans.PlanPair(o.env.Budget, p)
	return o.emit(pairName, o.File, p.Derived(), set, err)
}

// emit prints a planning outcome: the plans, or the incompatible verdict
// (exit 3). source names where the PDPair came from, for invalid layouts;
// derived is what a model-aware pair's buffers were derived from.
func (o *Options) emit(pairName, source string, derived *pdv1.DerivedBuffers, set *transferplan.PlanSet, planErr error) error {
	var le *transferplan.LayoutError
	if ee, ok := cli.AsExit(planErr); ok {
		return ee
	}
	switch {
	case planErr == nil:
	case engine.IsInputError(planErr):
		errors.As(planErr, &le)
		return cli.UsageErrorf("%s: invalid PDPair: %s", source, le.Message)
	case errors.As(planErr, &le):
		return pairplans.Incompatible(o.env.Streams.Out, o.print, o.format, le)
	default:
		return cli.UsageErrorf("%v", planErr)
	}
	return o.printSet(pairName, set, func(w io.Writer) error { return writeTable(w, pairName, derived, set) })
}

// printSet prints a plan set: the table, the pictures, or the set as JSON
// or YAML (the published plan format).
func (o *Options) printSet(pairName string, set *transferplan.PlanSet, table printflags.Writer) error {
	writers := pairplans.Pictures(pairName, set)
	writers[printflags.Table] = table
	if err := o.print.Print(o.env.Streams.Out, o.format, printflags.Output{Value: set, Writers: writers}); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	return nil
}
