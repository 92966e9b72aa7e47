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

// Cost is what a compatible pair's transfers cost under vLLM's
// NixlConnector, per decode rank (the worst rank; the mapping is regular).
type Cost struct {
	// ReadsPerDecodeRank is how many prefill ranks a decode rank reads
	// (compute_tp_mapping's all_source_ranks): each is a NIXL transfer per
	// request and a remote agent to keep.
	ReadsPerDecodeRank int
	// TransfersPerDecodeBlock is how many NIXL descriptors fill one decode
	// block of one layer: a descriptor per prefill rank read times the
	// blocks of prefill's that make one of decode's.
	TransfersPerDecodeBlock int
	// BytesPerTransfer is one descriptor's length, the prefill block's
	// bytes in one region (smaller pieces move less per round trip).
	BytesPerTransfer int
	// Notifications is the prefill ranks a decode rank handshakes with but
	// only notifies (no bytes).
	Notifications int
}

// Candidate is one layout of the other role and its verdict's cost.
type Candidate struct {
	Role    Role
	Verdict Verdict
	Cost    Cost
}

// Rank lists, for the model and one role's fixed layout, the other role's
// layouts vLLM accepts (and pdtopo too): TP in TPSizes at which the model
// loads, --block-size in BlockSizes, the fixed role's layout and dtype
// string (rules 2 and 4 allow no other). Cheapest first: fewest prefill
// ranks read per decode rank, then fewest descriptors per decode block,
// then the largest descriptors, then fewest notify-only targets, then the
// TP nearest the fixed role's, then the smaller TP and block size.
func Rank(m Model, fixed Role, side Side) []Candidate {
	var out []Candidate
	for _, tp := range TPSizes {
		if !loads(m, tp) {
			continue
		}
		for _, bs := range BlockSizes {
			other := Role{TP: tp, BlockSize: bs, KVCacheLayout: fixed.layout(), KVCacheDtype: fixed.dtype(), Version: fixed.Version}
			p := Pair{Model: m, Prefill: fixed, Decode: other, KVConnector: Connector}
			if side == SideDecode {
				p.Prefill, p.Decode = other, fixed
			}
			if v := Judge(p); v.Compatible() {
				out = append(out, Candidate{Role: other, Verdict: v, Cost: costOf(p, v)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j], fixed.TP) })
	return out
}

// Assess judges p and, when vLLM accepts it, costs its transfers as Rank
// does (a refused pair costs nothing: its Cost is zero).
func Assess(p Pair) (Verdict, Cost) {
	v := Judge(p)
	if !v.Compatible() {
		return v, Cost{}
	}
	return v, costOf(p, v)
}

// Keys are the keys Rank orders candidates by before its tie-breaks, most
// significant first: reads per decode rank, descriptors per decode block,
// the larger descriptor, notify-only targets.
func (c Cost) Keys() []int {
	return []int{c.ReadsPerDecodeRank, c.TransfersPerDecodeBlock, -c.BytesPerTransfer, c.Notifications}
}

// Transfers is the cost's TransfersPerPage in pdtopo advise.
func (c Cost) Transfers() int64 { return int64(c.TransfersPerDecodeBlock) }

// String says the cost for people.
func (c Cost) String() string {
	return fmt.Sprintf("%d read(s) per decode rank, %d NIXL descriptor(s) of %d B per decode block and layer, %d notify-only",
		c.ReadsPerDecodeRank, c.TransfersPerDecodeBlock, c.BytesPerTransfer, c.Notifications)
}

func costOf(p Pair, v Verdict) Cost {
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
	}
	c.TransfersPerDecodeBlock = c.ReadsPerDecodeRank * (p.Decode.BlockSize / p.Prefill.BlockSize)
	c.BytesPerTransfer = blockBytes(p.Model, p.Prefill)
	return c
}

func less(a, b Candidate, fixedTP int) bool {
	ka := append(a.Cost.Keys(), abs(a.Role.TP-fixedTP), a.Role.TP, a.Role.BlockSize)
	kb := append(b.Cost.Keys(), abs(b.Role.TP-fixedTP), b.Role.TP, b.Role.BlockSize)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}
