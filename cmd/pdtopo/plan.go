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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// incompatibleResult is what -o json|yaml prints for a layout that cannot be planned.
type incompatibleResult struct {
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	// Fix is the end of Message: the change that would make the pair plannable.
	Fix string `json:"fix"`
}

// planOutputs are the formats of `plan -o`.
var planOutputs = []string{"table", "json", "yaml", "svg", "dot"}

type planOptions struct {
	kube     *genericclioptions.ConfigFlags
	streams  genericclioptions.IOStreams
	file     string
	output   string
	name     string
	hfConfig string
}

func newPlanCommand(kube *genericclioptions.ConfigFlags, streams genericclioptions.IOStreams) *cobra.Command {
	o := &planOptions{kube: kube, streams: streams}
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
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "PDPair manifest: a YAML or JSON file, a directory of them, or - for standard input")
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: "+strings.Join(planOutputs, ", ")+" (svg and dot draw the topology)")
	cmd.Flags().StringVar(&o.name, "name", "", "with -f: the PDPair to plan when the manifest holds several")
	cmd.Flags().StringVar(&o.hfConfig, "hf-config", "", "with -f: the config.json of a model-aware PDPair whose spec.model names a ConfigMap (configMapKeyRef)")
	return cmd
}

func (o *planOptions) run(cmd *cobra.Command, args []string) error {
	if !contains(planOutputs, o.output) {
		return usageErrorf("-o must be one of %s, got %q", strings.Join(planOutputs, ", "), o.output)
	}
	switch {
	case o.file != "" && len(args) > 0:
		return usageErrorf("give -f FILE|DIR|- or a PDPair NAME, not both")
	case o.file == "" && len(args) == 0:
		return usageErrorf("-f FILE|DIR|- or a PDPair NAME is required")
	case len(args) > 0 && o.name != "":
		return usageErrorf("--name picks a PDPair from a manifest (-f); in the cluster give the NAME alone")
	case len(args) > 0:
		return o.runCluster(cmd, args[0])
	}
	config, err := readHFConfig(o.hfConfig)
	if err != nil {
		return err
	}
	pair, err := readPair(o.file, o.name, o.streams.In, o.streams.ErrOut)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if eng := engines.For(pair.Spec); eng.ReadsContracts(pair.Spec) {
		return o.runContract(eng, pair)
	}
	pairName, p, verdict, err := resolvePair(o.file, pair, config)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if verdict != nil {
		return o.emit(pairName, o.file, nil, nil, verdict)
	}
	set, err := planPair(p)
	return o.emit(pairName, o.file, p.Derived(), set, err)
}

// emit prints a planning outcome: the plans, or the incompatible verdict
// (exit 3). source names where the PDPair came from, for invalid layouts;
// derived is what a model-aware pair's buffers were derived from.
func (o *planOptions) emit(pairName, source string, derived *pdv1.DerivedBuffers, set *transferplan.PlanSet, planErr error) error {
	var le *transferplan.LayoutError
	if ee, ok := asExit(planErr); ok {
		return ee
	}
	switch {
	case planErr == nil:
	case engine.IsInputError(planErr):
		errors.As(planErr, &le)
		return usageErrorf("%s: invalid PDPair: %s", source, le.Message)
	case errors.As(planErr, &le) && isPicture(o.output):
		// No picture of plans that do not exist; the verdict goes to stderr
		// so a redirected .svg file is not left holding text.
		return &exitError{code: exitIncompatible, msg: fmt.Sprintf("INCOMPATIBLE %s: %s", le.Reason, le.Message)}
	case errors.As(planErr, &le):
		if err := printIncompatible(o.streams.Out, o.output, le); err != nil {
			return usageErrorf("writing output: %v", err)
		}
		return errIncompatible
	default:
		return usageErrorf("%v", planErr)
	}
	if err := printPlans(o.streams.Out, o.output, pairName, derived, set); err != nil {
		return usageErrorf("writing output: %v", err)
	}
	return nil
}

// readResolved reads the manifest's PDPair and resolves its spec into
// planner input, deriving a model-aware pair's buffers (config is the
// config.json --hf-config gives, for a spec.model naming a ConfigMap); what
// it skips is noted on notes. A refusal that is a verdict on the layout
// rather than broken input (a TP the engine cannot run the model with) comes
// back as verdict.
func readResolved(file, name string, stdin io.Reader, notes io.Writer, config []byte) (pairName string, p engine.Pair, verdict, err error) {
	pair, err := readPair(file, name, stdin, notes)
	if err != nil {
		return "", nil, nil, err
	}
	return resolvePair(file, pair, config)
}

// readPair reads the manifest and picks the PDPair to plan; what it skips
// is noted on notes.
func readPair(file, name string, stdin io.Reader, notes io.Writer) (*pdv1.PDPair, error) {
	pairs, err := readPairs(file, stdin, notes)
	if err != nil {
		return nil, err
	}
	pair, err := manifest.Pick(pairs, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return pair, nil
}

// resolvePair is readResolved for a PDPair already read.
func resolvePair(file string, pair *pdv1.PDPair, config []byte) (pairName string, p engine.Pair, verdict, err error) {
	p, err = engines.For(pair.Spec).Resolve(pair.Spec, engine.Inputs{ModelConfig: config})
	var le *transferplan.LayoutError
	switch {
	case engine.IsInputError(err) && errors.As(err, &le):
		return "", nil, nil, fmt.Errorf("%s: invalid PDPair %q: %s", file, pair.Name, le.Message)
	case p == nil:
		return pair.Name, nil, err, nil
	}
	// Any other error of an explicit spec is a planning verdict, reported
	// by the planner itself.
	return pair.Name, p, nil, nil
}

// readHFConfig reads --hf-config (nothing when it is not given), at most
// modelgeom.MaxConfigBytes and a byte more, so that a larger file is refused
// by its size.
func readHFConfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("--hf-config: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, modelgeom.MaxConfigBytes+1))
	if err != nil {
		return nil, usageErrorf("--hf-config %s: %v", path, err)
	}
	if len(b) > modelgeom.MaxConfigBytes {
		size := int64(len(b))
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
		return nil, usageErrorf("--hf-config %s: %s: config.json: the file is %d bytes; at most %d are read. Fix: give the model's own config.json (a few kilobytes), not weights or an index",
			path, modelgeom.ReasonInvalidModelConfig, size, modelgeom.MaxConfigBytes)
	}
	return b, nil
}

// readPairs reads every PDPair of a file, of standard input ("-") or of the
// manifests in a directory (not recursive; kustomization files and files
// holding only comments are passed over). The input may hold other objects
// too, an application's Deployments and Services beside its PDPairs: they
// are skipped, and each file's skipped objects are named on notes.
func readPairs(file string, stdin io.Reader, notes io.Writer) ([]pdv1.PDPair, error) {
	if file == "-" {
		return readPairsFrom(file, stdin, notes)
	}
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return readPairsFile(file, notes)
	}
	entries, err := os.ReadDir(file)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		base := strings.TrimSuffix(strings.ToLower(e.Name()), ext)
		if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml" || ext == ".json") && base != "kustomization" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var pairs []pdv1.PDPair
	for _, n := range names {
		got, err := readPairsFile(filepath.Join(file, n), notes)
		if errors.Is(err, manifest.ErrNoPDPair) {
			continue
		}
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, got...)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s: no PDPair in its %d manifest file(s)", file, len(names))
	}
	return pairs, nil
}

func readPairsFile(path string, notes io.Writer) ([]pdv1.PDPair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readPairsFrom(path, f, notes)
}

// readPairsFrom reads the PDPairs of one stream named name, noting the
// objects of other kinds it skips.
func readPairsFrom(name string, r io.Reader, notes io.Writer) ([]pdv1.PDPair, error) {
	pairs, skipped, err := manifest.ReadPDPairsAmong(r)
	if len(skipped) > 0 {
		what := make([]string, len(skipped))
		for i, s := range skipped {
			what[i] = s.String()
		}
		fmt.Fprintf(notes, "skipped %s: %s (not PDPairs)\n", name, strings.Join(what, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return pairs, nil
}

func printIncompatible(w io.Writer, output string, le *transferplan.LayoutError) error {
	if output == "table" {
		_, err := fmt.Fprintf(w, "INCOMPATIBLE  %s\n  %s\n", le.Reason, le.Message)
		return err
	}
	return writeStructured(w, output, incompatibleResult{Compatible: false, Reason: string(le.Reason), Message: le.Message, Fix: le.Fix})
}

func printPlans(w io.Writer, output, name string, derived *pdv1.DerivedBuffers, set *transferplan.PlanSet) error {
	switch {
	case output == "table":
		return writeTable(w, name, derived, set)
	case isPicture(output):
		return writePicture(w, output, name, set)
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
