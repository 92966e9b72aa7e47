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

package modelplan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// Row is one layout of a fleet: whether it plans, and what its transfers cost.
type Row struct {
	Prefill transferplan.Parallelism `json:"prefill"`
	Decode  transferplan.Parallelism `json:"decode"`
	// Compatible: the layout plans within the plan budget. Reason is empty
	// then; otherwise the planner's or the derivation's reason, or
	// PlanTooLarge when the layout is compatible but its plans are over
	// the budget (OverBudget).
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason"`
	// Message says why, ending with the fix; Fix is that fix.
	Message    string `json:"message,omitempty"`
	Fix        string `json:"fix,omitempty"`
	OverBudget bool   `json:"overBudget,omitempty"`

	// PlanKind is identity, fragmented or mla.
	PlanKind string `json:"planKind,omitempty"`
	// FragmentsPerPage is the most fragments one buffer of one page costs a
	// decode rank from one prefill rank (0: whole items move).
	FragmentsPerPage int `json:"fragmentsPerPage"`
	// PrefillRanksPerDecodeRank is the most prefill ranks one decode rank
	// pulls bytes from (dummies left out).
	PrefillRanksPerDecodeRank int `json:"prefillRanksPerDecodeRank"`
	// IdlePrefillRanks counts the prefill TP ranks (per DP group) no decode
	// rank pulls from; IdlePrefillTPRanks lists them.
	IdlePrefillRanks   int   `json:"idlePrefillRanks"`
	IdlePrefillTPRanks []int `json:"idlePrefillTPRanks"`
	// BytesPerTokenPerDecodeRank is the KV bytes one token costs the busiest
	// decode rank; StateBytesPerDecodeRank the recurrent state it receives
	// per request.
	BytesPerTokenPerDecodeRank int64 `json:"bytesPerTokenPerDecodeRank"`
	StateBytesPerDecodeRank    int64 `json:"stateBytesPerRequestPerDecodeRank,omitempty"`
	// TransfersPerPage is the cost the rows are ranked by: the transfers one
	// KV page costs the busiest decode rank (a fragment is one transfer per
	// page; a target without fragments copies each buffer's item in one).
	TransfersPerPage int64 `json:"transfersPerPage"`
	// Fragments are the fragments of all decode ranks' plans (estimated,
	// for a row over the budget).
	Fragments int64 `json:"fragments"`
	// GPUs is prefill TP + decode TP: the ranks of one instance of each role.
	GPUs int `json:"gpus"`
	// Cost says TransfersPerPage and what makes it, for people.
	Cost string `json:"cost"`
}

// Advise plans the model at every combination of the prefill and decode
// layouts (base gives the dtype, page size and draft layers) and returns the
// rows cheapest first: plannable rows by TransfersPerPage, then fewer prefill
// ranks per decode rank, fewer idle prefill ranks, fewer GPUs; then rows
// over the plan budget; incompatible rows last. Each row is sized before it
// is planned and refused past the budget.
func Advise(m *modelgeom.Model, base modelgeom.Options, l15 bool, prefill, decode []modelgeom.Role, budget transferplan.Budget) []Row {
	rows := make([]Row, 0, len(prefill)*len(decode))
	for _, pr := range prefill {
		for _, dr := range decode {
			o := base
			o.Prefill, o.Decode = pr, dr
			rows = append(rows, Pair{Model: m, Options: o, MLAL15Cache: l15}.Evaluate(budget))
		}
	}
	slices.SortStableFunc(rows, compareRows)
	return rows
}

func class(r Row) int {
	switch {
	case r.Compatible:
		return 0
	case r.OverBudget:
		return 1
	}
	return 2
}

func compareRows(a, b Row) int {
	return cmp.Or(
		cmp.Compare(class(a), class(b)),
		cmp.Compare(a.TransfersPerPage, b.TransfersPerPage),
		cmp.Compare(a.PrefillRanksPerDecodeRank, b.PrefillRanksPerDecodeRank),
		cmp.Compare(a.IdlePrefillRanks, b.IdlePrefillRanks),
		cmp.Compare(a.GPUs, b.GPUs),
		cmp.Compare(a.Prefill.TPSize, b.Prefill.TPSize),
		cmp.Compare(a.Decode.TPSize, b.Decode.TPSize),
		cmp.Compare(a.Prefill.DPSize, b.Prefill.DPSize),
		cmp.Compare(a.Decode.DPSize, b.Decode.DPSize),
	)
}

// Evaluate derives, sizes and plans the pair and measures its plans.
func (p Pair) Evaluate(budget transferplan.Budget) Row {
	o := p.Options
	row := Row{
		Prefill:            transferplan.Parallelism{TPSize: o.Prefill.TP, DPSize: o.Prefill.DP},
		Decode:             transferplan.Parallelism{TPSize: o.Decode.TP, DPSize: o.Decode.DP},
		GPUs:               o.Prefill.TP + o.Decode.TP,
		IdlePrefillTPRanks: []int{},
	}
	l, _, err := p.Layout()
	var me *modelgeom.Error
	if errors.As(err, &me) {
		row.Reason, row.Message, row.Fix = string(me.Reason), me.Message(), me.Fix
		row.Cost = "—"
		return row
	}
	size, err := planv1.CheckBudget(l, budget)
	if le := p.Check(); le != nil {
		err = le
	}
	var le *transferplan.LayoutError
	var be *transferplan.BudgetError
	switch {
	case errors.As(err, &le):
		le = p.Explain(le)
		row.Reason, row.Message, row.Fix = string(le.Reason), le.Message, le.Fix
		row.Cost = "—"
		return row
	case errors.As(err, &be):
		row.Reason, row.OverBudget = "PlanTooLarge", true
		row.PlanKind, row.Fragments = string(size.Kind), size.Fragments
		row.Message = "compatible, but " + be.Error()
		row.Fix = "raise the plan budget (--max-plan-fragments, --max-plan-bytes), or choose a layout with fewer fragments"
		row.Message += ". Fix: " + row.Fix
		row.Cost = fmt.Sprintf("over the plan budget: %d fragments", size.Fragments)
		return row
	case err != nil:
		row.Reason, row.Message = "PlanningFailed", err.Error()
		return row
	}
	planner, err := planv1.NewPlanner(l)
	if err != nil { // CheckBudget classified the same layout: cannot happen
		row.Reason, row.Message = "PlanningFailed", err.Error()
		return row
	}
	row.Compatible = true
	p.measure(&row, l, planner)
	return row
}

// measure plans one decode rank at a time (the set is never held) and keeps
// the busiest rank's numbers.
func (p Pair) measure(row *Row, l planv1.Layout, planner *planv1.Planner) {
	z := transferplan.NewSummarizer(l.Record())
	T := int64(max(l.TokensPerPage, 1))
	var kvItems, stateItems int64
	for _, b := range l.KVBuffers {
		kvItems += b.DecodeItemBytes
	}
	for _, b := range l.StateBuffers {
		stateItems += b.DecodeItemBytes
	}
	for d := range planner.DecodeTPSize() {
		plan, _ := planner.RoutePlan(d)
		z.Add(&plan)
		var sources int
		var transfers, kvBytes, stateBytes int64
		for _, t := range plan.Targets {
			if t.IsDummy {
				continue
			}
			sources++
			if len(t.Fragments) == 0 {
				// Whole items of every buffer; with the L1.5 cache each page
				// comes from one of the targets, so count it once.
				if !l.MLAL15Cache || sources == 1 {
					transfers += int64(len(l.KVBuffers))
					kvBytes += kvItems
					stateBytes += stateItems
				}
				continue
			}
			for _, f := range t.Fragments {
				if f.BufferKind == transferplan.MambaState {
					stateBytes += f.BytesPerPage
					continue
				}
				transfers++
				kvBytes += f.BytesPerPage
			}
		}
		row.PrefillRanksPerDecodeRank = max(row.PrefillRanksPerDecodeRank, sources)
		row.TransfersPerPage = max(row.TransfersPerPage, transfers)
		row.BytesPerTokenPerDecodeRank = max(row.BytesPerTokenPerDecodeRank, kvBytes/T)
		row.StateBytesPerDecodeRank = max(row.StateBytesPerDecodeRank, stateBytes)
	}
	sum := z.Summary()
	row.PlanKind, row.FragmentsPerPage, row.Fragments = string(sum.Kind), sum.FragmentsPerPage, int64(sum.Fragments)
	row.IdlePrefillTPRanks = planner.IdlePrefillTPRanks()
	row.IdlePrefillRanks = len(row.IdlePrefillTPRanks)
	row.Cost = fmt.Sprintf("%d transfers per page from %d prefill rank(s), %d B each on average",
		row.TransfersPerPage, row.PrefillRanksPerDecodeRank, row.BytesPerTokenPerDecodeRank*T/max(row.TransfersPerPage, 1))
}
