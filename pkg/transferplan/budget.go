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

package transferplan

import "fmt"

// A layout every field of which is within its limits can still describe tens
// of millions of fragments (4096 prefill ranks feeding one decode rank over
// 32768 buffers). Planning such a layout would exhaust the memory of whoever
// tries, so every consumer sizes the plans arithmetically first and refuses
// past a budget.

// PlanSize is the size of a layout's plan set, computed from the layout
// alone: what planning would produce, without planning.
type PlanSize struct {
	Kind PlanKind
	// DecodeTPRanks is the number of plans (decode TP ranks per DP group).
	DecodeTPRanks int
	// Fragments is exact: the fragments of every decode rank's plan.
	Fragments int64
	// MaxRankFragments bounds the fragments of any one decode rank's plan.
	MaxRankFragments int64
	// Targets bounds the targets of all plans (exact for identity and MLA).
	Targets int64
	// PlanBytes bounds the canonical JSON of all rank plans: what the
	// operator marshals and compresses.
	PlanBytes int64
	// MaxRankPlanBytes bounds one decode rank's plan JSON: what an agent loads.
	MaxRankPlanBytes int64
}

// Budget bounds the plans one layout may have. The defaults admit the
// largest layout the documentation promises (prefill TP 512 → decode TP 1024
// with 400 buffers: 409,600 fragments, about 94 MB of plan JSON) with room.
type Budget struct {
	// MaxFragments bounds the fragments of all decode ranks' plans.
	MaxFragments int64
	// MaxPlanBytes bounds the estimated JSON of all decode ranks' plans.
	MaxPlanBytes int64
	// MaxRankPlanBytes bounds the estimated JSON of one decode rank's plan.
	MaxRankPlanBytes int64
}

// DefaultBudget is the budget of the operator, the CLI and the agent unless
// raised.
var DefaultBudget = Budget{MaxFragments: 512 << 10, MaxPlanBytes: 192 << 20, MaxRankPlanBytes: 64 << 20}

// BudgetLimit names one limit of a Budget.
type BudgetLimit string

const (
	LimitFragments     BudgetLimit = "MaxFragments"
	LimitPlanBytes     BudgetLimit = "MaxPlanBytes"
	LimitRankPlanBytes BudgetLimit = "MaxRankPlanBytes"
)

// BudgetError says that a layout's plans are larger than the budget.
type BudgetError struct {
	Size   PlanSize
	Budget Budget
	// Exceeded are the limits the plans pass, in the order of Budget's fields.
	Exceeded []BudgetLimit
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("PlanTooLarge: %s; the plan budget is %s", e.Size, e.Budget)
}

func (s PlanSize) String() string {
	return fmt.Sprintf("the plans of %d decode TP ranks would hold %d fragments and about %d bytes of plan JSON (up to %d bytes for one rank)",
		s.DecodeTPRanks, s.Fragments, s.PlanBytes, s.MaxRankPlanBytes)
}

func (b Budget) String() string {
	return fmt.Sprintf("%d fragments, %d bytes in all and %d bytes per rank", b.MaxFragments, b.MaxPlanBytes, b.MaxRankPlanBytes)
}

// Check returns a *BudgetError when the plans pass any limit of the budget.
// A zero or negative limit is not a limit: Budget{} admits everything.
func (b Budget) Check(s PlanSize) error {
	var over []BudgetLimit
	for _, l := range []struct {
		limit       BudgetLimit
		max, actual int64
	}{
		{LimitFragments, b.MaxFragments, s.Fragments},
		{LimitPlanBytes, b.MaxPlanBytes, s.PlanBytes},
		{LimitRankPlanBytes, b.MaxRankPlanBytes, s.MaxRankPlanBytes},
	} {
		if l.max > 0 && l.actual > l.max {
			over = append(over, l.limit)
		}
	}
	if over == nil {
		return nil
	}
	return &BudgetError{Size: s, Budget: b, Exceeded: over}
}
