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

package rules

import (
	"fmt"
	"sort"
)

// Side names a role of the pair.
type Side int

const (
	// SidePrefill is the prefill role.
	SidePrefill Side = iota
	// SideDecode is the decode role.
	SideDecode
)

// DPSizes are the DP-attention sizes Rank considers for the other role.
var DPSizes = []int{1, 2, 4, 8}

// Cost is what a compatible pair's transfers cost under SGLang, per decode
// rank (the worst rank; the mapping is regular).
type Cost struct {
	// ReadsPerDecodeRank is how many prefill ranks (and stages) a decode
	// rank reads: a transfer each per request.
	ReadsPerDecodeRank int
	// Notifications is the targets a decode rank only notifies (MLA at
	// prefill attention TP above decode's): a route lookup and a message
	// each, no bytes.
	Notifications int
	// DecodeRanksPerPrefillRank is required_dst_info_num: how many decode
	// ranks one prefill rank writes each request to.
	DecodeRanksPerPrefillRank int
}

// Candidate is one layout of the other role and its verdict's cost.
type Candidate struct {
	Role    Role
	Verdict Verdict
	Cost    Cost
}

// Rank lists, for the model and one role's fixed layout, the other role's
// layouts SGLang serves (and pdtopo too): --tp-size in TPSizes with a
// DP-attention size in DPSizes dividing it at which the model loads, the
// fixed role's page size and dtype string (rules 1 and 2 allow no other)
// and its PP size. Cheapest first: fewest prefill ranks read per decode
// rank, then fewest notify-only targets, then fewest decode ranks per
// prefill rank, then the TP nearest the fixed role's, then the smaller TP
// and DP.
func Rank(m Model, fixed Role, side Side) []Candidate {
	var out []Candidate
	for _, tp := range TPSizes {
		for _, dp := range DPSizes {
			other := Role{TP: tp, DP: dp, PP: fixed.pp(), PageSize: fixed.PageSize, KVCacheDtype: fixed.dtype()}
			if tp%dp != 0 || !roleLoads(m, other) {
				continue
			}
			p := Pair{Model: m, Prefill: fixed, Decode: other}
			if side == SideDecode {
				p.Prefill, p.Decode = other, fixed
			}
			if v := Judge(p); v.Compatible() {
				out = append(out, Candidate{Role: other, Verdict: v, Cost: costOf(v)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j], fixed.TP) })
	return out
}

// Assess judges p and, when SGLang serves it (and pdtopo too), costs its
// transfers as Rank does (a refused pair costs nothing: its Cost is zero).
// Neither maps a rank: the cost is counted (Count), the mapping is Judge's.
func Assess(p Pair) (*Refusal, Cost) {
	if r := Refuse(p); r != nil {
		return r, Cost{}
	}
	c := Count(p)
	return nil, Cost{ReadsPerDecodeRank: c.Reads, Notifications: c.Targets - c.Reads, DecodeRanksPerPrefillRank: c.DstInfo}
}

// Keys are the keys Rank orders candidates by before its tie-breaks, most
// significant first: reads per decode rank, notify-only targets, decode
// ranks per prefill rank.
func (c Cost) Keys() []int {
	return []int{c.ReadsPerDecodeRank, c.Notifications, c.DecodeRanksPerPrefillRank}
}

// Transfers is the cost's TransfersPerPage in pdtopo advise.
func (c Cost) Transfers() int64 { return int64(c.ReadsPerDecodeRank) }

// String says the cost for people.
func (c Cost) String() string {
	return fmt.Sprintf("%d read(s) per decode rank, %d notify-only, each prefill rank writes to %d decode rank(s)",
		c.ReadsPerDecodeRank, c.Notifications, c.DecodeRanksPerPrefillRank)
}

func costOf(v Verdict) Cost {
	var c Cost
	for _, d := range v.DecodeRanks {
		reads := 0
		for _, t := range d.Targets {
			if !t.IsDummy {
				reads++
			}
		}
		c.ReadsPerDecodeRank = max(c.ReadsPerDecodeRank, reads)
		c.Notifications = max(c.Notifications, len(d.Targets)-reads)
		c.DecodeRanksPerPrefillRank = max(c.DecodeRanksPerPrefillRank, d.RequiredDstInfoNum)
	}
	return c
}

func less(a, b Candidate, fixedTP int) bool {
	ka := append(a.Cost.Keys(), abs(a.Role.TP-fixedTP), a.Role.TP, a.Role.dp())
	kb := append(b.Cost.Keys(), abs(b.Role.TP-fixedTP), b.Role.TP, b.Role.dp())
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}
