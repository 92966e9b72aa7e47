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
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// PlanPair sizes the pair's plans arithmetically and plans it only when
// they are within the budget: a layout within every field's limits can still
// describe billions of bytes of plans. Its errors are the engine's
// *LayoutError or a *cli.ExitError with cli.ExitTooLarge or cli.ExitUsage.
func PlanPair(budget transferplan.Budget, p engine.Pair) (*transferplan.PlanSet, error) {
	return WithinBudget(budget, func() error {
		_, err := p.Size(budget)
		return err
	}, func() (*transferplan.PlanSet, error) {
		ranks, err := p.Map()
		if err != nil {
			return nil, err
		}
		if ranks.Plans() == nil {
			// An engine whose connector moves the bytes states its mapping.
			if m, ok := ranks.(*engine.TargetMap); ok {
				return m.PlanSet(), nil
			}
			return nil, errors.New("the pair's engine publishes no plans")
		}
		return ranks.Plans().PlanSet()
	})
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
