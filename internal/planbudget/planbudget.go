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

// Package planbudget binds the plan budget (transferplan.Budget) to command
// line flags, the same flags in the manager and the pdtopo CLI, and explains
// a refusal by naming the flag that raises the limit that was passed.
package planbudget

import (
	"flag"
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Flag names; the manager and pdtopo plan use the same.
const (
	FlagMaxFragments     = "max-plan-fragments"
	FlagMaxPlanBytes     = "max-plan-bytes"
	FlagMaxRankPlanBytes = "max-rank-plan-bytes"
)

var flagOf = map[transferplan.BudgetLimit]string{
	transferplan.LimitFragments:     FlagMaxFragments,
	transferplan.LimitPlanBytes:     FlagMaxPlanBytes,
	transferplan.LimitRankPlanBytes: FlagMaxRankPlanBytes,
}

// BindFlags registers the budget's flags on fs, defaulting to b's values.
func BindFlags(fs *flag.FlagSet, b *transferplan.Budget) {
	fs.Int64Var(&b.MaxFragments, FlagMaxFragments, b.MaxFragments,
		"refuse a PDPair whose plans would hold more fragments than this (sized before planning; 0: no limit)")
	fs.Int64Var(&b.MaxPlanBytes, FlagMaxPlanBytes, b.MaxPlanBytes,
		"refuse a PDPair whose plans would take more bytes of JSON than this, all decode ranks together (0: no limit)")
	fs.Int64Var(&b.MaxRankPlanBytes, FlagMaxRankPlanBytes, b.MaxRankPlanBytes,
		"refuse a PDPair one decode rank's plan of which would take more bytes of JSON than this (at most what an agent loads)")
}

// Validate rejects negative limits.
func Validate(b transferplan.Budget) error {
	for name, v := range map[string]int64{FlagMaxFragments: b.MaxFragments, FlagMaxPlanBytes: b.MaxPlanBytes, FlagMaxRankPlanBytes: b.MaxRankPlanBytes} {
		if v < 0 {
			return fmt.Errorf("--%s must be 0 (no limit) or positive, got %d", name, v)
		}
	}
	// Agents refuse a rank plan past planstore.MaxRankPlanBytes whatever the
	// operator admits: publishing one would only fail later, in every pod.
	if b.MaxRankPlanBytes == 0 || b.MaxRankPlanBytes > planstore.MaxRankPlanBytes {
		return fmt.Errorf("--%s must be between 1 and %d (what an agent loads), got %d", FlagMaxRankPlanBytes, planstore.MaxRankPlanBytes, b.MaxRankPlanBytes)
	}
	return nil
}

// Explain says what is too large, by how much, and which flags of who
// raise the limits: "... raise the manager's --max-plan-fragments".
func Explain(e *transferplan.BudgetError, who string) string {
	var over, flags []string
	for _, l := range e.Exceeded {
		switch l {
		case transferplan.LimitFragments:
			over = append(over, fmt.Sprintf("%d fragments > %d", e.Size.Fragments, e.Budget.MaxFragments))
		case transferplan.LimitPlanBytes:
			over = append(over, fmt.Sprintf("about %d bytes of plan JSON > %d", e.Size.PlanBytes, e.Budget.MaxPlanBytes))
		case transferplan.LimitRankPlanBytes:
			over = append(over, fmt.Sprintf("up to %d bytes for one decode rank > %d", e.Size.MaxRankPlanBytes, e.Budget.MaxRankPlanBytes))
		}
		flags = append(flags, "--"+flagOf[l])
	}
	return fmt.Sprintf("the plans are over the plan budget and were not computed: %s (%s); %s; "+
		"reduce the layout (%s) or raise %s %s",
		strings.Join(over, ", "), e.Size.Kind, e.Size, reduction(e.Size), who, strings.Join(flags, " and "))
}

// reduction is what makes a layout's plans smaller: fragments come from
// buffers cut across ranks; an engine's rank map (no fragments) grows only
// with its decode ranks and the prefill ranks each reads.
func reduction(s transferplan.PlanSize) string {
	if s.Fragments == 0 {
		return "fewer decode ranks, or fewer prefill ranks read by each"
	}
	return "fewer buffers, or prefill and decode TP sizes that cut each other's shards less"
}
