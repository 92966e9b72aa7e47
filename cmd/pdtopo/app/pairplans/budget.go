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

package pairplans

import (
	"errors"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// PlanLayout sizes the layout's plans arithmetically and plans it only when
// they are within the budget: a layout within every field's limits can still
// describe billions of bytes of plans. Its errors are the planner's
// *LayoutError or a *cli.ExitError with cli.ExitTooLarge or cli.ExitUsage.
func PlanLayout(budget transferplan.Budget, layout planv1.Layout) (*transferplan.PlanSet, error) {
	return WithinBudget(budget, func() error {
		_, err := planv1.CheckBudget(layout, budget)
		return err
	}, func() (*transferplan.PlanSet, error) { return planv1.Plan(layout) })
}

// PlanContract sizes a cache-contract pair's plans and plans it within the budget.
func PlanContract(budget transferplan.Budget, cp plancontract.Pair) (*transferplan.PlanSet, error) {
	return WithinBudget(budget, func() error {
		_, err := plancontract.CheckBudget(cp, budget)
		return err
	}, func() (*transferplan.PlanSet, error) { return plancontract.Plan(cp) })
}

// WithinBudget runs check (a pair's arithmetic sizing against the budget)
// and plan only when the plans fit, for v1 and contract pairs.
func WithinBudget(budget transferplan.Budget, check func() error, plan func() (*transferplan.PlanSet, error)) (*transferplan.PlanSet, error) {
	if err := planbudget.Validate(budget); err != nil {
		return nil, cli.UsageErrorf("%v", err)
	}
	err := check()
	var be *transferplan.BudgetError
	if errors.As(err, &be) {
		return nil, cli.Exitf(cli.ExitTooLarge, "PlanTooLarge: %s", planbudget.Explain(be, "pdtopo's"))
	}
	if err != nil {
		return nil, err
	}
	return plan()
}
