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
	"errors"
	"flag"

	"github.com/spf13/pflag"

	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// planBudget is this invocation's plan budget, set by the flags of
// planbudget (the manager's flags, under the same names).
var planBudget = transferplan.DefaultBudget

// addBudgetFlags registers the plan budget flags on fs, reset to the defaults.
func addBudgetFlags(fs *pflag.FlagSet) {
	planBudget = transferplan.DefaultBudget
	gofs := flag.NewFlagSet("plan budget", flag.ContinueOnError)
	planbudget.BindFlags(gofs, &planBudget)
	fs.AddGoFlagSet(gofs)
}

// planPair sizes the pair's plans arithmetically and plans it only when
// they are within the budget: a layout within every field's limits can still
// describe billions of bytes of plans. Its errors are the engine's
// *LayoutError or an *exitError with exitTooLarge or exitUsage.
func planPair(p engine.Pair) (*transferplan.PlanSet, error) {
	return planWithinBudget(func() error {
		_, err := p.Size(planBudget)
		return err
	}, func() (*transferplan.PlanSet, error) {
		ranks, err := p.Map()
		if err != nil {
			return nil, err
		}
		if ranks.Plans() == nil {
			return nil, errors.New("the pair's engine publishes no plans")
		}
		return ranks.Plans().PlanSet()
	})
}

// planWithinBudget runs check (a pair's arithmetic sizing against
// planBudget) and plan only when the plans fit, for v1 and contract pairs.
func planWithinBudget(check func() error, plan func() (*transferplan.PlanSet, error)) (*transferplan.PlanSet, error) {
	if err := planbudget.Validate(planBudget); err != nil {
		return nil, usageErrorf("%v", err)
	}
	err := check()
	var be *transferplan.BudgetError
	if errors.As(err, &be) {
		return nil, &exitError{code: exitTooLarge, msg: "PlanTooLarge: " + planbudget.Explain(be, "pdtopo's")}
	}
	if err != nil {
		return nil, err
	}
	return plan()
}

// asExit returns err when it already carries an exit code.
func asExit(err error) (*exitError, bool) {
	var ee *exitError
	return ee, errors.As(err, &ee)
}
