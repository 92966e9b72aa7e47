package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/internal/pairlayout"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// incompatibleResult is what -o json|yaml prints for a layout that cannot be planned.
type incompatibleResult struct {
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
}

func runPlan(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pdtopo plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "PDPair manifest (YAML or JSON); - reads standard input")
	output := fs.String("o", "table", "output format: table, json or yaml")
	name := fs.String("name", "", "the PDPair to plan when the manifest holds several")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "pdtopo plan: -f FILE|- is required and no other arguments are taken")
		return exitUsage
	}
	if *output != "table" && *output != "json" && *output != "yaml" {
		fmt.Fprintf(stderr, "pdtopo plan: -o must be table, json or yaml, got %q\n", *output)
		return exitUsage
	}
	pairName, layout, err := readLayout(*file, *name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "pdtopo plan: %v\n", err)
		return exitUsage
	}
	set, err := transferplan.Plan(layout)
	var le *transferplan.LayoutError
	switch {
	case err == nil:
	case transferplan.IsInvalidLayout(err):
		fmt.Fprintf(stderr, "pdtopo plan: %s: invalid PDPair: %s\n", *file, err.(*transferplan.LayoutError).Message)
		return exitUsage
	case errors.As(err, &le):
		return printIncompatible(stdout, stderr, *output, le)
	default:
		fmt.Fprintf(stderr, "pdtopo plan: %v\n", err)
		return exitUsage
	}
	if err := printPlans(stdout, *output, pairName, layout, set); err != nil {
		fmt.Fprintf(stderr, "pdtopo plan: writing output: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// readLayout reads the manifest and converts its spec to planner input.
func readLayout(file, name string, stdin io.Reader) (string, transferplan.Layout, error) {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", transferplan.Layout{}, err
		}
		defer f.Close()
		in = f
	}
	pair, err := manifest.ReadPDPair(in, name)
	if err != nil {
		return "", transferplan.Layout{}, fmt.Errorf("%s: %w", file, err)
	}
	layout, err := pairlayout.FromSpec(pair.Spec)
	if transferplan.IsInvalidLayout(err) {
		return "", layout, fmt.Errorf("%s: invalid PDPair %q: %s", file, pair.Name, err.(*transferplan.LayoutError).Message)
	}
	// Any other error is a planning verdict, reported by the planner itself.
	return pair.Name, layout, nil
}

func printIncompatible(stdout, stderr io.Writer, output string, le *transferplan.LayoutError) int {
	res := incompatibleResult{Compatible: false, Reason: string(le.Reason), Message: le.Message}
	var err error
	switch output {
	case "table":
		_, err = fmt.Fprintf(stdout, "INCOMPATIBLE  %s\n  %s\n", le.Reason, le.Message)
	default:
		err = writeStructured(stdout, output, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pdtopo plan: writing output: %v\n", err)
		return exitUsage
	}
	return exitIncompatible
}

func printPlans(w io.Writer, output, name string, layout transferplan.Layout, set *transferplan.PlanSet) error {
	if output == "table" {
		return writeTable(w, name, layout, set)
	}
	return writeStructured(w, output, set)
}

// writeStructured prints v as indented JSON or as YAML.
func writeStructured(w io.Writer, output string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if output == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}
