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
	"fmt"
	"strconv"
)

// LayoutRecord is the layout a set of plans was made for, in the terms a
// prefill's bootstrap server reports (TP/DP, L1.5 flag, item and unit lengths
// per buffer), so that an agent can check a plan against a live prefill.
type LayoutRecord struct {
	AttentionBackend     AttentionBackend `json:"attentionBackend"`
	MLAL15Cache          bool             `json:"mlaL15Cache"`
	TokensPerPage        int              `json:"tokensPerPage"`
	Prefill              Parallelism      `json:"prefill"`
	Decode               Parallelism      `json:"decode"`
	KVBufferKinds        []BufferKind     `json:"kvBufferKinds"`
	PrefillKVItemLens    []int64          `json:"prefillKVItemLens"`
	PrefillKVUnitLens    []int64          `json:"prefillKVUnitLens"`
	DecodeKVItemLens     []int64          `json:"decodeKVItemLens"`
	DecodeKVUnitLens     []int64          `json:"decodeKVUnitLens"`
	PrefillStateItemLens []int64          `json:"prefillStateItemLens"`
	PrefillStateUnitLens []int64          `json:"prefillStateUnitLens"`
	DecodeStateItemLens  []int64          `json:"decodeStateItemLens"`
	DecodeStateUnitLens  []int64          `json:"decodeStateUnitLens"`

	// Wire is empty for v1 pairs (and not written) and WireCacheContract for
	// contract pairs, whose record holds only the parallelism and the
	// SHA-256 of each role's canonical contract (see MarshalJSON).
	Wire                  Wire   `json:"wire,omitempty"`
	PrefillContractSHA256 string `json:"prefillContractSHA256,omitempty"`
	DecodeContractSHA256  string `json:"decodeContractSHA256,omitempty"`
}

// Record is the layout in the form published beside its plans.
func (l Layout) Record() LayoutRecord {
	r := LayoutRecord{
		AttentionBackend: l.Attention, MLAL15Cache: l.MLAL15Cache, TokensPerPage: l.TokensPerPage,
		Prefill: l.Prefill, Decode: l.Decode,
		KVBufferKinds: make([]BufferKind, 0, len(l.KVBuffers)),
	}
	r.PrefillKVItemLens, r.PrefillKVUnitLens, r.DecodeKVItemLens, r.DecodeKVUnitLens = lens(l.KVBuffers)
	r.PrefillStateItemLens, r.PrefillStateUnitLens, r.DecodeStateItemLens, r.DecodeStateUnitLens = lens(l.StateBuffers)
	for _, b := range l.KVBuffers {
		r.KVBufferKinds = append(r.KVBufferKinds, b.Kind)
	}
	return r
}

func lens(bs []BufferSpec) (pi, pu, di, du []int64) {
	pi, pu, di, du = make([]int64, len(bs)), make([]int64, len(bs)), make([]int64, len(bs)), make([]int64, len(bs))
	for i, b := range bs {
		pi[i], pu[i], di[i], du[i] = b.PrefillItemBytes, b.PrefillUnitBytes, b.DecodeItemBytes, b.DecodeUnitBytes
	}
	return pi, pu, di, du
}

// Layout rebuilds the planner input from a record (buffer fields are named
// after their index, as the record does not keep the spec's groups).
func (r LayoutRecord) Layout() Layout {
	l := Layout{
		Attention: r.AttentionBackend, MLAL15Cache: r.MLAL15Cache, TokensPerPage: r.TokensPerPage,
		Prefill: r.Prefill, Decode: r.Decode,
	}
	for i, k := range r.KVBufferKinds {
		l.KVBuffers = append(l.KVBuffers, BufferSpec{
			Kind: k, Field: "kvBuffer " + strconv.Itoa(i),
			PrefillItemBytes: at(r.PrefillKVItemLens, i), DecodeItemBytes: at(r.DecodeKVItemLens, i),
			PrefillUnitBytes: at(r.PrefillKVUnitLens, i), DecodeUnitBytes: at(r.DecodeKVUnitLens, i),
		})
	}
	for i := range r.DecodeStateItemLens {
		l.StateBuffers = append(l.StateBuffers, BufferSpec{
			Kind: MambaState, Field: "stateBuffer " + strconv.Itoa(i),
			PrefillItemBytes: at(r.PrefillStateItemLens, i), DecodeItemBytes: at(r.DecodeStateItemLens, i),
			PrefillUnitBytes: at(r.PrefillStateUnitLens, i), DecodeUnitBytes: at(r.DecodeStateUnitLens, i),
		})
	}
	return l
}

func at(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

// PlanSet is every decode TP rank's plan for one layout: what `pdtopo plan -o
// json` prints and what the operator publishes.
type PlanSet struct {
	Compatible bool         `json:"compatible"`
	Layout     LayoutRecord `json:"layout"`
	Plans      []RoutePlan  `json:"plans"`
}

// Plan validates the layout and plans every decode TP rank.
func Plan(l Layout) (*PlanSet, error) {
	p, err := NewPlanner(l)
	if err != nil {
		return nil, err
	}
	return &PlanSet{Compatible: true, Layout: l.Record(), Plans: p.RoutePlans()}, nil
}

// Hash is the hex SHA-256 of the plan set's canonical JSON encoding.
func (s *PlanSet) Hash() string {
	b, err := json.Marshal(s)
	if err != nil { // only plain values: cannot happen
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
	layout LayoutRecord
	sum    Summary
	plans  int
	// mostRun is the longest run of one target's fragments for one buffer,
	// runAt its first fragment and runRank the decode rank it was seen in.
	mostRun, runRank int
	runAt            TransferFragment
	// mostRows is the most rows one contract fragment copies per page.
	mostRows int64
	rowsAt   ContractFragment
}

// NewSummarizer starts a summary of the plans of a layout.
func NewSummarizer(layout LayoutRecord) *Summarizer {
	return &Summarizer{layout: layout, sum: Summary{PrefillFanOut: make([]int, layout.Prefill.TPPerDP()), IdlePrefillRanks: []int{}}}
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
		z.addRuns(plan.DecodeTPRank, t.Fragments)
		for _, f := range t.ContractFragments {
			if f.RowsPerPage > z.mostRows {
				z.mostRows, z.rowsAt = f.RowsPerPage, f
			}
		}
	}
}

// addRuns finds the longest run of fragments one target has for one buffer
// (a target's fragments of a buffer are consecutive: one slice, cut into
// token rows or not).
func (z *Summarizer) addRuns(decodeRank int, frags []TransferFragment) {
	for i, run := 0, 0; i < len(frags); i++ {
		f := frags[i]
		if i == 0 || f.BufferKind != frags[i-1].BufferKind || f.BufferIndex != frags[i-1].BufferIndex {
			run = 0
		}
		if run++; run > z.mostRun {
			z.mostRun, z.runAt, z.runRank = run, frags[i-run+1], decodeRank
		}
	}
}

// Summary is the summary of the plans added so far.
func (z *Summarizer) Summary() Summary {
	sum := z.sum
	sum.PrefillFanOut = append([]int(nil), z.sum.PrefillFanOut...)
	sum.MaxPrefillFanOut = 0
	for _, f := range sum.PrefillFanOut {
		sum.MaxPrefillFanOut = max(sum.MaxPrefillFanOut, f)
	}
	sum.FragmentsPerPage, sum.PageCost = z.pageCost()
	return sum
}

// pageCost says what the longest run of one buffer's fragments is and why.
func (z *Summarizer) pageCost() (int, string) {
	if z.layout.Wire == WireCacheContract {
		return z.contractPageCost()
	}
	most, at, of := z.mostRun, z.runAt, z.runRank
	switch {
	case most == 0:
		return 0, "whole items: each prefill rank copies whole pages, no fragments"
	case most == 1 && z.layout.TokensPerPage <= 1:
		return 1, "1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token"
	case most == 1:
		return 1, "1 fragment per page for each buffer a decode rank pulls from a prefill rank: every slice is whole token rows on both sides, so a page's rows move as one block"
	}
	rows := int64(most)
	unit := int64(1)
	if at.BufferKind.IsKV() && at.BufferIndex < len(z.layout.PrefillKVUnitLens) && z.layout.PrefillKVUnitLens[at.BufferIndex] > 0 {
		unit = z.layout.PrefillKVUnitLens[at.BufferIndex]
	}
	return most, fmt.Sprintf("%d fragments per page for each buffer a decode rank pulls from a prefill rank: "+
		"decode rank %d takes %d of prefill rank %d's %d heads (%d-byte units) from each of the %d token rows of a page into its %d-head rows; "+
		"pages are token-major, so each row is a separate fragment",
		most, of, at.BytesPerPage/unit, at.SrcRank, at.SrcPageStrideBytes/rows/unit, unit, rows, at.DstPageStrideBytes/rows/unit)
}

// contractPageCost says how many copies a contract fragment costs per page.
func (z *Summarizer) contractPageCost() (int, string) {
	f := z.rowsAt
	switch z.mostRows {
	case 0:
		return 0, "whole fields: each prefill rank copies its fields' pages whole, no fragments"
	case 1:
		return 1, "1 copy per page for each field fragment a decode rank pulls from a prefill rank: every slice is whole rows on both sides"
	default:
		return int(z.mostRows), fmt.Sprintf("%d copies per page for each field fragment a decode rank pulls from a prefill rank: "+
			"field %q takes %d of every %d-byte row of the prefill's page into %d-byte rows, for each of the %d rows of a page",
			z.mostRows, f.FieldID, f.BytesPerRow, f.SrcRowStrideBytes, f.DstRowStrideBytes, z.mostRows)
	}
}
