// Command pdtopo is the pdtopo command line: `pdtopo plan` shows whether a
// PDPair's prefill and decode layouts can exchange KV cache and every decode
// rank's route plan. Installed as kubectl-pdtopo it also works as `kubectl pdtopo`.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes: scripts tell a broken manifest from an incompatible layout.
const (
	exitOK           = 0
	exitUsage        = 2 // unreadable or structurally invalid input, bad flags
	exitIncompatible = 3 // the layouts cannot exchange KV cache
)

const usage = `pdtopo — KV-cache transfer topology for prefill/decode disaggregated serving.

Usage:
  pdtopo plan -f FILE|- [-o table|json|yaml] [--name NAME]
      Validate a PDPair manifest and print every decode TP rank's route plan.
      Exit status: 0 compatible, 2 unreadable or invalid manifest, 3 incompatible layout.
  pdtopo help
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "plan":
		return runPlan(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "pdtopo: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}
