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

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// PlanSet is every decode TP rank's plan for one layout: what `pdtopo plan -o
// json` prints and what the operator publishes.
type PlanSet struct {
	Compatible bool         `json:"compatible"`
	Layout     LayoutRecord `json:"layout"`
	Plans      []RoutePlan  `json:"plans"`
}

// Hash is the hex SHA-256 of the plan set's canonical JSON encoding.
func (s *PlanSet) Hash() string {
	b, err := json.Marshal(s)
	if err != nil { // plain values and a record of a linked wire (its planner made it, or planstore read it)
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Summary condenses a plan set for people and for the PDPair status.
type Summary struct {
	Kind             PlanKind
	MinTargets       int
	MaxTargets       int
	PrefillFanOut    []int // per prefill TP rank: decode ranks that target it
	MaxPrefillFanOut int
	IdlePrefillRanks []int
	Fragments        int
	// FragmentsPerPage is the most fragments one buffer of one page costs a
	// decode rank from one prefill rank: 0 when whole items move (identity,
	// MLA), 1 when every slice is whole token rows on both sides, and
	// tokensPerPage when a decode rank takes a head range of each token row.
	FragmentsPerPage int
	// PageCost says, for people, what FragmentsPerPage is and why.
	PageCost string
}

// Summarize computes the summary of a plan set.
func (s *PlanSet) Summarize() Summary {
	z := NewSummarizer(s.Layout)
	for i := range s.Plans {
		z.Add(&s.Plans[i])
	}
	return z.Summary()
}

// Summarizer computes a Summary one plan at a time, for callers that stream
// plans (planstore.EncodePlanner) instead of holding the whole set.
type Summarizer struct {
	sum   Summary
	plans int
	// cost is the wire's part: what one page costs (Summary.PageCost).
	cost PageCost
}

// NewSummarizer starts a summary of the plans of a layout.
func NewSummarizer(layout LayoutRecord) *Summarizer {
	return &Summarizer{
		sum:  Summary{PrefillFanOut: make([]int, layout.Prefill.TPPerDP()), IdlePrefillRanks: []int{}},
		cost: rulesOf(layout.Wire).NewPageCost(layout),
	}
}

// Add counts the next plan; plans are added in decode rank order.
func (z *Summarizer) Add(plan *RoutePlan) {
	sum := &z.sum
	n := len(plan.Targets)
	if z.plans == 0 {
		sum.Kind, sum.MinTargets, sum.MaxTargets = plan.PlanKind, n, n
		sum.IdlePrefillRanks = append(sum.IdlePrefillRanks, plan.IdlePrefillTPRanks...)
	}
	z.plans++
	sum.MinTargets, sum.MaxTargets = min(sum.MinTargets, n), max(sum.MaxTargets, n)
	for _, t := range plan.Targets {
		if t.PrefillTPRank >= 0 && t.PrefillTPRank < len(sum.PrefillFanOut) {
			sum.PrefillFanOut[t.PrefillTPRank]++
		}
		sum.Fragments += len(t.Fragments) + len(t.ContractFragments)
	}
	z.cost.Add(plan)
}

// Summary is the summary of the plans added so far.
func (z *Summarizer) Summary() Summary {
	sum := z.sum
	sum.PrefillFanOut = append([]int(nil), z.sum.PrefillFanOut...)
	sum.MaxPrefillFanOut = 0
	for _, f := range sum.PrefillFanOut {
		sum.MaxPrefillFanOut = max(sum.MaxPrefillFanOut, f)
	}
	sum.FragmentsPerPage, sum.PageCost = z.cost.Cost()
	return sum
}
