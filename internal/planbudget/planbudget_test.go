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

package planbudget

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := Validate(transferplan.DefaultBudget); err != nil {
		t.Fatalf("the default budget is refused: %v", err)
	}
	for _, b := range []transferplan.Budget{
		{MaxFragments: -1, MaxRankPlanBytes: 1},
		{MaxRankPlanBytes: planstore.MaxRankPlanBytes + 1},
		{MaxRankPlanBytes: 0},
	} {
		if Validate(b) == nil {
			t.Errorf("budget %+v accepted", b)
		}
	}
}

// Explain names the limits passed, with the numbers and the flags that
// raise them, and no flag whose limit was kept.
func TestExplainNamesTheFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := transferplan.DefaultBudget
	BindFlags(fs, &b)
	if err := fs.Parse([]string{"--max-plan-fragments=100"}); err != nil {
		t.Fatal(err)
	}
	l := planv1.Layout{Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: 8, DPSize: 1}, Decode: transferplan.Parallelism{TPSize: 4, DPSize: 1}}
	for _, kind := range []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV} {
		for range 40 {
			l.KVBuffers = append(l.KVBuffers, planv1.BufferSpec{Kind: kind, PrefillItemBytes: 256, DecodeItemBytes: 512, PrefillUnitBytes: 256, DecodeUnitBytes: 256})
		}
	}
	_, err := planv1.CheckBudget(l, b)
	var be *transferplan.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("80 buffers × 4 ranks × 2 = 640 fragments pass a budget of 100: %v", err)
	}
	msg := Explain(be, "the manager's")
	for _, want := range []string{"640 fragments > 100", "the manager's --max-plan-fragments"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "--"+FlagMaxPlanBytes) {
		t.Errorf("%q names a limit that was not passed", msg)
	}
}

// An engine's rank map has no fragments: its refusal asks for fewer ranks,
// not fewer buffers, which it has none of.
func TestExplainRankMapAsksForFewerRanks(t *testing.T) {
	be := &transferplan.BudgetError{
		Size:     transferplan.PlanSize{DecodeTPRanks: 4096, Targets: 16 << 20, PlanBytes: 1 << 30},
		Budget:   transferplan.Budget{MaxPlanBytes: 192 << 20},
		Exceeded: []transferplan.BudgetLimit{transferplan.LimitPlanBytes},
	}
	msg := Explain(be, "the manager's")
	if !strings.Contains(msg, "fewer decode ranks") || strings.Contains(msg, "fewer buffers") {
		t.Errorf("a rank map's refusal says %q; want fewer decode ranks, not fewer buffers", msg)
	}
}
