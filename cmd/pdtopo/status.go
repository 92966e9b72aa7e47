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
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

type statusOptions struct {
	kube          *genericclioptions.ConfigFlags
	streams       genericclioptions.IOStreams
	allNamespaces bool
	// print is kubectl's -o: json, yaml, name, go-template, jsonpath, …;
	// empty and "wide" are this command's own table.
	print *genericclioptions.PrintFlags
}

func newStatusCommand(kube *genericclioptions.ConfigFlags, streams genericclioptions.IOStreams) *cobra.Command {
	o := &statusOptions{kube: kube, streams: streams, print: genericclioptions.NewPrintFlags("")}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List every PDPair with its plan kind, compatibility and fragments",
		Long: `List every PDPair of the namespace (or of all namespaces with -A): the prefill
and decode layouts, the plan kind, whether the layouts are compatible (or the
reason they are not), the fragment count of the published plans, whether the
plans are published and the pair is ready, and its decode fleet: the decode
pods bound to it and how many of their agents are ready and run the current
plan.

-o wide adds each plan's prefill targets per decode rank, fragments per
page, idle prefill ranks, ConfigMaps and hash; -o json, yaml, name and the
templates print the PDPairs as kubectl get does.`,
		Example: `  kubectl pdtopo status -n llm
  kubectl pdtopo status -A -o wide
  kubectl pdtopo status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the PDPairs of every namespace")
	o.print.AddFlags(cmd)
	cmd.Flags().Lookup("output").Usage = "output format: wide, or one of " + strings.Join(o.print.AllowedFormats(), ", ") +
		" (default: the table)"
	return cmd
}

func (o *statusOptions) run(cmd *cobra.Command) error {
	format := *o.print.OutputFormat
	wide := format == "wide"
	var printer printers.ResourcePrinter
	if format != "" && !wide {
		p, err := o.print.ToPrinter()
		if err != nil {
			// An unknown -o lists the formats, "wide" among them.
			return usageErrorf("-o must be wide or one of %s, got %q", strings.Join(o.print.AllowedFormats(), ", "), format)
		}
		printer = p
	}
	c, err := connect(o.kube)
	if err != nil {
		return err
	}
	pairs, err := c.listPairs(cmd.Context(), o.allNamespaces)
	if err != nil {
		return err
	}
	if printer != nil {
		if err := printPairs(o.streams.Out, printer, format, pairs); err != nil {
			return usageErrorf("writing output: %v", err)
		}
		return nil
	}
	if len(pairs) == 0 {
		where := c.where
		if o.allNamespaces {
			where = "any namespace"
		}
		fmt.Fprintf(o.streams.ErrOut, "No PDPairs in %s.\n", where)
		return nil
	}
	if err := writeStatus(o.streams.Out, pairs, o.allNamespaces, wide); err != nil {
		return usageErrorf("writing output: %v", err)
	}
	return nil
}

// printPairs prints the pairs with one of cli-runtime's printers, as kubectl
// get does: "name" one pdpair.pd.pdtopo.dev/NAME line per pair, the others
// the PDPairList (an empty list when there are none, so that scripts always
// get a document).
func printPairs(w io.Writer, printer printers.ResourcePrinter, format string, pairs []pdv1.PDPair) error {
	list := &pdv1.PDPairList{Items: append([]pdv1.PDPair{}, pairs...)} // [] rather than null when empty
	list.SetGroupVersionKind(pdv1.GroupVersion.WithKind("PDPairList"))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(pdv1.GroupVersion.WithKind("PDPair"))
	}
	if format != "name" {
		return printer.PrintObj(list, w)
	}
	// cli-runtime's name printer takes no typed lists.
	for i := range list.Items {
		if err := printer.PrintObj(&list.Items[i], w); err != nil {
			return err
		}
	}
	return nil
}

// writeStatus prints one row per pair, in the order the API server lists them
// (by namespace, then name); wide adds the plan's shape and publication.
func writeStatus(w io.Writer, pairs []pdv1.PDPair, withNamespace, wide bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := "NAME\tPREFILL\tDECODE\tPLAN\tCOMPATIBLE\tFRAGMENTS\tPUBLISHED\tREADY\tDECODE PODS\tAGENTS READY\tAGENTS CURRENT"
	if withNamespace {
		head = "NAMESPACE\t" + head
	}
	if wide {
		head += "\tTARGETS/RANK\tFRAGMENTS/PAGE\tIDLE PREFILL\tCONFIGMAPS\tPLAN HASH"
	}
	fmt.Fprintln(tw, head)
	for i := range pairs {
		p := &pairs[i]
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", p.Name, fleet(p.Spec.Prefill), fleet(p.Spec.Decode),
			planKind(p), conditionCell(p, pdv1.PDPairLayoutCompatible), fragments(p),
			conditionCell(p, pdv1.PDPairPlansPublished), conditionCell(p, pdv1.PDPairReady), decodeFleet(p))
		if withNamespace {
			row = p.Namespace + "\t" + row
		}
		if wide {
			row += "\t" + planShape(p)
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// planHashDigits of the plan hash are shown, as git shows commits.
const planHashDigits = 12

// planShape is -o wide's columns: prefill targets per decode rank (min–max),
// fragments per page, idle prefill ranks, published ConfigMaps, plan hash.
func planShape(p *pdv1.PDPair) string {
	s := p.Status.Plan
	if s == nil {
		return "-\t-\t-\t-\t-"
	}
	perPage := "-"
	if s.FragmentsPerPage > 0 {
		perPage = fmt.Sprint(s.FragmentsPerPage)
	}
	return fmt.Sprintf("%d–%d\t%s\t%d\t%d\t%s", s.MinTargetsPerDecodeRank, s.MaxTargetsPerDecodeRank, perPage,
		len(s.IdlePrefillTPRanks), len(s.ConfigMaps), s.Hash[:min(len(s.Hash), planHashDigits)])
}

// fleet is "TP8 DP1".
func fleet(f pdv1.FleetLayout) string {
	return fmt.Sprintf("TP%d DP%d", f.TensorParallelSize, f.DataParallel())
}

func planKind(p *pdv1.PDPair) string {
	if p.Status.Plan == nil {
		return "-"
	}
	return p.Status.Plan.Kind
}

// decodeFleet is the bound decode pods and how many of their agents are
// ready and run the current plan, as the operator last counted them.
func decodeFleet(p *pdv1.PDPair) string {
	f := p.Status.DecodeFleet
	if f == nil {
		return "-\t-\t-"
	}
	return fmt.Sprintf("%d\t%d/%d\t%d/%d", f.Pods, f.AgentsReady, f.Pods, f.AgentsCurrent, f.Pods)
}

func fragments(p *pdv1.PDPair) string {
	if p.Status.Plan == nil {
		return "-"
	}
	return fmt.Sprint(p.Status.Plan.FragmentCount)
}

// conditionCell is "True", "False (Reason)", or "Unknown" when the condition
// is absent or describes an older generation.
func conditionCell(p *pdv1.PDPair, t pdv1.PDPairConditionType) string {
	c := meta.FindStatusCondition(p.Status.Conditions, string(t))
	switch {
	case c == nil:
		return "Unknown"
	case c.ObservedGeneration != 0 && c.ObservedGeneration != p.Generation:
		return fmt.Sprintf("%s (generation %d)", c.Status, c.ObservedGeneration)
	case c.Status == metav1.ConditionTrue:
		return string(metav1.ConditionTrue)
	default:
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
}
