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

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/pairlayout"
)

// runCluster is `plan NAME`: the pair's conditions, then its plans.
func (o *planOptions) runCluster(cmd *cobra.Command, name string) error {
	c, err := connect(o.kube)
	if err != nil {
		return err
	}
	pair, err := c.getPair(cmd.Context(), name)
	if err != nil {
		return err
	}
	if pairlayout.IsContractPair(pair.Spec) {
		return o.runClusterContract(cmd, c, pair)
	}
	pp, err := resolvePlans(cmd.Context(), c, pair)
	if err != nil {
		return err
	}
	if o.output == "table" {
		if err := writeConditions(o.streams.Out, pair); err != nil {
			return usageErrorf("writing output: %v", err)
		}
		fmt.Fprintf(o.streams.Out, "Plans: %s\n\n", pp.origin)
	} else if !pp.published {
		// Structured output stays machine-readable; the note goes to stderr.
		fmt.Fprintf(o.streams.ErrOut, "%s: note: %s\n", cmd.CommandPath(), pp.origin)
	}
	if pp.incompatible != nil {
		return o.emit(pair.Name, "PDPair "+pair.Name, pp.res, nil, pp.incompatible)
	}
	return o.emit(pair.Name, "PDPair "+pair.Name, pp.res, pp.set, nil)
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps a table row on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// runClusterContract is `plan NAME` for a pair on the cache-contract wire:
// its conditions, then the plans the operator published (the operator
// reads the contracts, from ConfigMaps too; a pair with both contracts
// inline is planned here when nothing is published).
func (o *planOptions) runClusterContract(cmd *cobra.Command, c *cluster, pair *pdv1.PDPair) error {
	set, why, err := loadPublished(cmd.Context(), c, pair)
	if err != nil {
		return err
	}
	if o.output == "table" {
		if err := writeConditions(o.streams.Out, pair); err != nil {
			return usageErrorf("writing output: %v", err)
		}
	}
	if set == nil {
		fmt.Fprintf(o.streams.ErrOut, "%s: note: the plans are not published (%s); planning from the spec's inline contracts\n", cmd.CommandPath(), why)
		return o.runContract(pair)
	}
	if o.output == "table" {
		fmt.Fprintf(o.streams.Out, "Plans: published, plan hash %s\n\n", shortHash(pair.Status.Plan.Hash))
		return writeContractPlans(o.streams.Out, set, set.Summarize())
	}
	if isPicture(o.output) {
		return writePicture(o.streams.Out, o.output, pair.Name, set)
	}
	return writeStructured(o.streams.Out, o.output, set)
}
