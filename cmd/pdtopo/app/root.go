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

// Package app is the pdtopo command line: the root command, which wires one
// package per verb (plan, routes, status, graph, pair, advise, contract)
// onto the shared flags of package cli, and Run, which turns a verb's
// error into its exit status. Installed as kubectl-pdtopo it works as
// `kubectl pdtopo`.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/advise"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/contract"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/graph"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pair"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/plan"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/routes"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/status"
	"github.com/pdtopo/pdtopo/internal/version"
)

// Run executes one command line with its own flags and streams and returns
// the exit code; main and the tests call it.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCommand(genericclioptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr})
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(context.Background())
	if err == nil {
		return cli.ExitOK
	}
	ee, ok := cli.AsExit(err)
	if !ok {
		// cobra's own errors: unknown command or flag, wrong arguments.
		ee = &cli.ExitError{Code: cli.ExitUsage, Msg: err.Error()}
	}
	if !ee.Quiet {
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), ee.Msg)
		if ee.Code == cli.ExitUsage && isCobraUsageError(err) {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return ee.Code
}

func isCobraUsageError(err error) bool {
	ee, ok := cli.AsExit(err)
	return !ok || strings.HasPrefix(ee.Msg, "flag: ")
}

// NewRootCommand builds the command tree. The kubectl flags (--kubeconfig,
// --context, -n, …) and the plan budget flags are shared by every verb.
func NewRootCommand(streams genericclioptions.IOStreams) *cobra.Command {
	env := cli.NewEnv(streams)
	root := &cobra.Command{
		Use:   "pdtopo",
		Short: "KV-cache transfer topology for prefill/decode disaggregated serving",
		Long: `pdtopo shows whether a PDPair's prefill and decode layouts can exchange KV
cache, and which bytes every decode rank pulls from which prefill rank.

Exit status: 0 compatible (or done), 2 unreadable, missing or invalid input or
bad flags, 3 incompatible layout, 4 the cluster (or a live engine) could not
be read, 5 the plans are past the plan budget.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(streams.ErrOut)
			_ = cmd.Usage()
			return cli.UsageErrorf("a command is required")
		},
	}
	if strings.HasPrefix(os.Args[0], "kubectl-") || strings.Contains(os.Args[0], "/kubectl-") {
		// As a kubectl plugin the user types `kubectl pdtopo`: cobra's
		// display name makes help and messages say `kubectl pdtopo plan`.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl pdtopo"}
	}
	root.Version = version.Version
	root.SetVersionTemplate(version.String("pdtopo") + "\n")
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return cli.UsageErrorf("flag: %v", err)
	})
	env.AddFlags(root.PersistentFlags())
	root.AddCommand(
		plan.NewCommand(env),
		routes.NewCommand(env),
		status.NewCommand(env),
		graph.NewCommand(env),
		pair.NewCommand(env),
		advise.NewCommand(env),
		contract.NewCommand(env),
	)
	return root
}
