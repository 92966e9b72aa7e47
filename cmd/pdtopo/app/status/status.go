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

// Package status is `pdtopo status`: every PDPair of the namespace with its
// layouts, plan, conditions and decode fleet; -o json, yaml, name and the
// templates print the PDPairs as kubectl get does.
package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
)

type options struct {
	env           *cli.Env
	allNamespaces bool
	// print is kubectl's -o (json, yaml, name, go-template, jsonpath, …)
	// and wide; empty is this command's own table.
	print *printflags.PrintFlags
}

// NewPrintFlags are status's -o: the table by default, wide, and the
// formats of kubectl get.
func NewPrintFlags() *printflags.PrintFlags {
	return printflags.New(printflags.Table, printflags.Wide).WithObjects()
}

// NewCommand is `status`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := &options{env: env, print: NewPrintFlags()}
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
	return cmd
}

func (o *options) run(cmd *cobra.Command) error {
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	c, err := cli.Connect(o.env.Kube)
	if err != nil {
		return err
	}
	pairs, err := c.ListPairs(cmd.Context(), o.allNamespaces)
	if err != nil {
		return err
	}
	table := format == printflags.Table || format == printflags.Wide
	if table && len(pairs) == 0 {
		where := c.Where
		if o.allNamespaces {
			where = "any namespace"
		}
		fmt.Fprintf(o.env.Streams.ErrOut, "No PDPairs in %s.\n", where)
		return nil
	}
	if err := o.print.Print(o.env.Streams.Out, format, Output(pairs, o.allNamespaces)); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	return nil
}

// Output is the pairs in every format of status: the table and wide, and
// the PDPairList the API formats print (an empty list when there are none,
// so that scripts always get a document), as kubectl get prints it.
func Output(pairs []pdv1.PDPair, withNamespace bool) printflags.Output {
	list := &pdv1.PDPairList{Items: append([]pdv1.PDPair{}, pairs...)} // [] rather than null when empty
	list.SetGroupVersionKind(pdv1.GroupVersion.WithKind("PDPairList"))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(pdv1.GroupVersion.WithKind("PDPair"))
	}
	return printflags.Output{Objects: list, Writers: map[printflags.Format]printflags.Writer{
		printflags.Table: func(w io.Writer) error { return writeStatus(w, pairs, withNamespace, false) },
		printflags.Wide:  func(w io.Writer) error { return writeStatus(w, pairs, withNamespace, true) },
	}}
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
