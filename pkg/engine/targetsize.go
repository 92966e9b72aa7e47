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

package engine

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// TargetCounts are the numbers a TargetMap would hold, counted from the
// layout by the engine's formula instead of mapped: the engines' mappings
// are regular, every decode rank contacts as many prefill ranks.
type TargetCounts struct {
	// DecodeRanks is the number of ranks mapped (every PP stage's).
	DecodeRanks int64
	// TargetsPerRank is the prefill ranks (and stages) one decode rank
	// contacts; ReadsPerRank those it reads (the others are dummies).
	TargetsPerRank, ReadsPerRank int64
	// MaxDecodeRank, MaxPrefillRank and MaxResponses are the largest numbers
	// the mapping prints, for the width of its JSON.
	MaxDecodeRank, MaxPrefillRank, MaxResponses int64
}

// SizeTargets is the size of a TargetMap of counts c, as PlanSet prints
// it (one route plan per decode rank, a target each without fragments),
// checked against the budget: past it, a *transferplan.BudgetError beside
// the size. Nothing is mapped, so a layout of billions of targets costs no
// more to refuse than one of four.
func SizeTargets(c TargetCounts, budget transferplan.Budget) (transferplan.PlanSize, error) {
	num := func(n int64) int64 { return transferplan.Digits(max(0, n)) + 1 } // a number and its comma
	target := transferplan.TargetJSONFixedBytes + num(c.MaxPrefillRank) + num(c.MaxResponses)
	rank := transferplan.PlanJSONFixedBytes + 2*num(c.MaxDecodeRank) + num(c.MaxResponses) +
		c.TargetsPerRank*target + c.ReadsPerRank*num(c.MaxPrefillRank)
	size := transferplan.PlanSize{
		DecodeTPRanks:    int(min(c.DecodeRanks, 1<<31-1)),
		Targets:          satMul(c.DecodeRanks, c.TargetsPerRank),
		PlanBytes:        satMul(c.DecodeRanks, rank),
		MaxRankPlanBytes: rank,
	}
	return size, budget.Check(size)
}

// satMul is a·b for non-negative a and b, saturating instead of wrapping.
func satMul(a, b int64) int64 {
	const maxInt64 = 1<<63 - 1
	if a != 0 && b > maxInt64/a {
		return maxInt64
	}
	return a * b
}
