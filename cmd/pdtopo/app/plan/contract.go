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
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// runContract plans a pair on the cache-contract wire from its inline
// contracts: exit 3 with compatible false where the engine refuses the pair
// (its decoder decodes both contracts but its planner refuses them, or a
// value cannot be moved), exit 2 when the spec or a contract is malformed.
func (o *Options) runContract(eng engine.Engine, pair *pdv1.PDPair) error {
	contracts, err := eng.ReadContracts(pair.Spec, engine.ReadInline)
	var set *transferplan.PlanSet
	if err == nil {
		var p engine.Pair
		if p, err = eng.Resolve(pair.Spec, engine.Inputs{Contracts: contracts}); err == nil {
			set, err = pairplans.PlanPair(o.env.Budget, p)
		}
	}
	var le *transferplan.LayoutError
	if ee, ok := cli.AsExit(err); ok {
		return ee
	}
	switch {
	case err == nil:
	case errors.As(err, &le) && malformedContract(le.Reason):
		return cli.UsageErrorf("%s: invalid PDPair %q: %s", o.File, pair.Name, le.Message)
	case errors.As(err, &le):
		return pairplans.Incompatible(o.env.Streams.Out, o.print, o.format, le)
	default:
		return cli.UsageErrorf("%v", err)
	}
	return o.printSet(pair.Name, set, func(w io.Writer) error { return writeContractTable(w, pair.Name, contracts.Roles(), set) })
}

// malformedContract: the input itself is broken (exit 2), not a pair the
// engine's planner refuses.
func malformedContract(r transferplan.Reason) bool {
	switch r {
	case transferplan.ReasonInvalidLayout, transferplan.ReasonContractInvalid, transferplan.ReasonContractTooLarge, engine.ReasonContractUnavailable:
		return true
	}
	return false
}

// writeContractTable prints a contract pair's verdict and every decode
// rank's sources: the fields each prefill rank sends and how many row
// copies a page costs.
func writeContractTable(w io.Writer, name string, roles [2]engine.ContractRole, set *transferplan.PlanSet) error {
	sum := set.Summarize()
	l := set.Layout
	var b strings.Builder
	fmt.Fprintf(&b, "PDPair %s: prefill TP %d DP %d → decode TP %d DP %d, wire CacheContract\n",
		cli.OrDash(name), l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize)
	for _, r := range []struct {
		role string
		c    engine.ContractRole
	}{{"prefill", roles[0]}, {"decode", roles[1]}} {
		fmt.Fprintf(&b, "%-8s contract %s… (%d bytes from %s): %s\n", r.role, r.c.SHA256[:12], len(r.c.Raw), r.c.Source, r.c.Holds)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return writeContractPlans(w, set, sum)
}

// writeContractPlans prints the verdict line and every decode rank's targets.
func writeContractPlans(w io.Writer, set *transferplan.PlanSet, sum transferplan.Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "COMPATIBLE  plan %s, %d plan(s), %d–%d prefill target(s) per decode rank, %d fragment(s), idle prefill ranks: %s\n",
		sum.Kind, len(set.Plans), sum.MinTargets, sum.MaxTargets, sum.Fragments, rankList(sum.IdlePrefillRanks))
	fmt.Fprintf(&b, "PAGE COST   %s\n\n", sum.PageCost)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECODE\tPREFILL\tROLE\tDST-INFO\tFRAGMENTS\tFIELDS")
	for _, plan := range set.Plans {
		for i, t := range plan.Targets {
			decode := ""
			if i == 0 {
				decode = fmt.Sprintf("%d (needs %d)", plan.DecodeTPRank, plan.RequiredPrefillResponseNum)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\n", decode, t.PrefillTPRank, pairplans.TargetRole(t), t.RequiredDstInfoNum,
				len(t.ContractFragments), contractFields(t))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nPREFILL FAN-OUT (decode ranks per prefill TP rank): %s\n", fanOutList(sum.PrefillFanOut))
	_, err := io.WriteString(w, b.String())
	return err
}

// contractFields summarises what a target moves.
func contractFields(t transferplan.PlanTarget) string {
	switch {
	case t.IsDummy:
		return "- (rendezvous only: empty manifests)"
	case len(t.ContractFragments) == 0:
		return "every field whole"
	}
	fields := map[string]bool{}
	rows := int64(1)
	for _, f := range t.ContractFragments {
		fields[f.FieldID] = true
		rows = max(rows, f.RowsPerPage)
	}
	return fmt.Sprintf("%d field(s), up to %d row copies per page", len(fields), rows)
}
