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

package plan

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
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// runCluster is `plan NAME`: the pair's conditions, then its plans.
func (o *Options) runCluster(cmd *cobra.Command, name string) error {
	c, err := cli.Connect(o.env.Kube)
	if err != nil {
		return err
	}
	pair, err := c.GetPair(cmd.Context(), name)
	if err != nil {
		return err
	}
	if eng := engines.For(pair.Spec); eng.ReadsContracts(pair.Spec) {
		return o.runClusterContract(cmd, eng, c, pair)
	}
	pp, err := pairplans.FromCluster(cmd.Context(), c, pair, o.env.Budget)
	if err != nil {
		return err
	}
	streams := o.env.Streams
	if o.format == printflags.Table {
		if err := writeConditions(streams.Out, pair); err != nil {
			return cli.UsageErrorf("writing output: %v", err)
		}
		fmt.Fprintf(streams.Out, "Plans: %s\n\n", pp.Origin)
	} else if !pp.Published {
		// Structured output stays machine-readable; the note goes to stderr.
		fmt.Fprintf(streams.ErrOut, "%s: note: %s\n", cmd.CommandPath(), pp.Origin)
	}
	if pp.Incompatible != nil {
		return o.emit(pair.Name, "PDPair "+pair.Name, pp.Derived, nil, pp.Incompatible)
	}
	return o.emit(pair.Name, "PDPair "+pair.Name, pp.Derived, pp.Set, nil)
}

// writeConditions prints the pair's identity and its status conditions.
func writeConditions(w io.Writer, pair *pdv1.PDPair) error {
	var b strings.Builder
	fmt.Fprintf(&b, "PDPair %s/%s: generation %d, observed %d\n", pair.Namespace, pair.Name, pair.Generation, pair.Status.ObservedGeneration)
	if len(pair.Status.Conditions) == 0 {
		b.WriteString("No conditions (the operator has not reconciled this PDPair).\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CONDITION\tSTATUS\tREASON\tMESSAGE")
		for _, c := range pair.Status.Conditions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, cli.OneLine(c.Message))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runClusterContract is `plan NAME` for a pair on the cache-contract wire:
// its conditions, then the plans the operator published (the operator
// reads the contracts, from ConfigMaps and the live engines too; a pair
// with both contracts inline is planned here when nothing is published,
// any other gets the operator's verdict).
func (o *Options) runClusterContract(cmd *cobra.Command, eng engine.Engine, c *cli.Cluster, pair *pdv1.PDPair) error {
	set, why, err := pairplans.LoadPublished(cmd.Context(), c, pair)
	if err != nil {
		return err
	}
	streams := o.env.Streams
	if o.format == printflags.Table {
		if err := writeConditions(streams.Out, pair); err != nil {
			return cli.UsageErrorf("writing output: %v", err)
		}
	}
	if set == nil && !contractsInline(pair.Spec) {
		return o.operatorVerdict(pair, why)
	}
	if set == nil {
		fmt.Fprintf(streams.ErrOut, "%s: note: the plans are not published (%s); planning from the spec's inline contracts\n", cmd.CommandPath(), why)
		return o.runContract(eng, pair)
	}
	return o.printSet(pair.Name, set, func(w io.Writer) error {
		fmt.Fprintf(w, "Plans: published, plan hash %s\n\n", pairplans.ShortHash(pair.Status.Plan.Hash))
		return writeContractPlans(w, set, set.Summarize())
	})
}

// contractsInline: both contracts are in the spec, inline; only then can
// the pair be planned here.
func contractsInline(spec pdv1.PDPairSpec) bool {
	c := spec.CacheContracts
	return c != nil && c.Prefill != nil && c.Decode != nil && c.Prefill.Inline != "" && c.Decode.Inline != ""
}

// operatorVerdict is what `plan NAME` says of a contract pair without
// published plans whose contracts only the operator reads (ConfigMaps,
// live engines): the operator's incompatible verdict (exit 3), or why
// there are no plans to show (exit 2).
func (o *Options) operatorVerdict(pair *pdv1.PDPair, why string) error {
	c := meta.FindStatusCondition(pair.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
	if c != nil && c.ObservedGeneration == pair.Generation && c.Status == metav1.ConditionFalse {
		le := &transferplan.LayoutError{Reason: transferplan.Reason(c.Reason), Message: c.Message}
		return pairplans.Incompatible(o.env.Streams.Out, o.print, o.format, le)
	}
	return cli.UsageErrorf("PDPair %s has no published plans to show (%s), and its contracts are read by the operator only (%s)", pair.Name, why, contractSources(pair))
}

// contractSources says where each role's contract comes from.
func contractSources(pair *pdv1.PDPair) string {
	if st := pair.Status.Contracts; st != nil {
		return fmt.Sprintf("prefill: %s, decode: %s", st.Prefill.Source, st.Decode.Source)
	}
	return "from ConfigMaps or the live engines"
}
