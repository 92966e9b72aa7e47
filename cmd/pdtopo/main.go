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

// Command pdtopo is the pdtopo command line. `pdtopo plan -f FILE` shows
// whether a PDPair's prefill and decode layouts can exchange KV cache and
// every decode rank's route plan, offline; `plan NAME`, `routes`, `status`
// and `graph` read PDPairs and their published plans from a cluster with the
// usual kubectl flags. Installed as kubectl-pdtopo it works as `kubectl pdtopo`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/internal/version"
)

// Exit codes: scripts tell a broken manifest from an incompatible layout,
// from a cluster that cannot be read and from plans too large to make. These
// are all the codes the command exits with; docs/kubectl-plugin.md's table
// lists them (a test holds the two together).
const (
	exitOK           = 0
	exitUsage        = 2 // unreadable, missing or structurally invalid input (file or PDPair), bad flags
	exitIncompatible = 3 // the layouts cannot exchange KV cache
	exitCluster      = 4 // the cluster (or, for contract, a live engine) could not be read
	exitTooLarge     = 5 // the plans would pass the plan budget (--max-plan-fragments…)
)

// exitError carries an exit code up to run; its message is printed on
// standard error prefixed with the command's path.
type exitError struct {
	code int
	msg  string
	// quiet: the output already said it (an incompatible verdict), print nothing.
	quiet bool
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

func clusterErrorf(format string, args ...any) error {
	return &exitError{code: exitCluster, msg: fmt.Sprintf(format, args...)}
}

// errIncompatible ends a command whose output has reported an incompatible layout.
var errIncompatible = &exitError{code: exitIncompatible, quiet: true}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line with its own flags and streams and returns
// the exit code; the tests call it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(genericclioptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr})
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(context.Background())
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		// cobra's own errors: unknown command or flag, wrong arguments.
		ee = &exitError{code: exitUsage, msg: err.Error()}
	}
	if !ee.quiet {
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), ee.msg)
		if ee.code == exitUsage && isCobraUsageError(err) {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return ee.code
}

func isCobraUsageError(err error) bool {
	var ee *exitError
	return !errors.As(err, &ee) || strings.HasPrefix(ee.msg, "flag: ")
}

// newRootCommand builds the command tree. The kubectl flags (--kubeconfig,
// --context, -n, …) are shared by every subcommand that reads a cluster.
func newRootCommand(streams genericclioptions.IOStreams) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(true)
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
			return usageErrorf("a command is required")
		},
	}
	if strings.HasPrefix(os.Args[0], "kubectl-") || strings.Contains(os.Args[0], "/kubectl-") {
		// As a kubectl plugin the user types `kubectl pdtopo`.
		root.Use = "kubectl pdtopo"
	}
	root.Version = version.Version
	root.SetVersionTemplate(version.String("pdtopo") + "\n")
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageErrorf("flag: %v", err)
	})
	kube.AddFlags(root.PersistentFlags())
	addBudgetFlags(root.PersistentFlags())
	root.AddCommand(
		newPlanCommand(kube, streams),
		newRoutesCommand(kube, streams),
		newStatusCommand(kube, streams),
		newGraphCommand(kube, streams),
		newPairCommand(kube, streams),
		newAdviseCommand(streams),
		newContractCommand(kube, streams),
	)
	return root
}
