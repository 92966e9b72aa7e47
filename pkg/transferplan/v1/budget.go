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

package v1

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// EstimatePlanSize validates and classifies the layout (returning its
// *LayoutError if it is incompatible) and computes the size of its plans in
// time linear in the number of buffers, whatever the fragment count.
func EstimatePlanSize(l Layout) (transferplan.PlanSize, error) {
	p, err := classify(l)
	if err != nil {
		return transferplan.PlanSize{}, err
	}
	return p.estimate(), nil
}

// fragmentJSONFixed bounds a TransferFragment without its numbers, with
// its separating comma (transferplan.PlanJSONFixedBytes has the rest).
const fragmentJSONFixed = int64(len(`{"buffer_index":,"buffer_kind":"","src_rank":,"dst_rank":,"src_page_stride_bytes":,` +
	`"dst_page_stride_bytes":,"src_byte_offset":,"dst_byte_offset":,"bytes_per_page":,"page_count":null},`))

// sourceClass groups sharded buffers whose fragments come from the same
// prefill ranks for every decode rank: same prefill shard length and replica
// group, same decode shard length. Replicated buffers form one class of
// their own (the source of decode rank d is always d*P/D).
type sourceClass struct {
	replicated   bool
	prefillShard int64
	replicaGroup int
	decodeShard  int64
}

// classSize is how many (decode rank, source) pairs a class yields: in all,
// and at most for one decode rank.
type classSize struct{ total, perRank int64 }

func (p *Planner) estimate() transferplan.PlanSize {
	P, D := int64(p.prefillTP), int64(p.decodeTP)
	s := transferplan.PlanSize{Kind: p.kind, DecodeTPRanks: p.decodeTP}
	var rankTargets int64
	switch p.kind {
	case transferplan.PlanIdentity:
		s.Targets, rankTargets = D, 1
	case transferplan.PlanMLA:
		s.Targets, rankTargets = p.mlaTargets()
	default:
		rankTargets = p.estimateFragments(&s)
	}
	targetBytes := transferplan.TargetJSONFixedBytes + transferplan.Digits(P-1) + transferplan.Digits(D) + transferplan.Digits(P-1) + 1 // + its targetTPRanks entry
	planBytes := transferplan.PlanJSONFixedBytes + transferplan.Digits(D-1) + max(transferplan.Digits(P-1), 4) + transferplan.Digits(P)
	idleBytes := P * (transferplan.Digits(P-1) + 1) // decode TP rank 0 lists the idle prefill ranks
	s.PlanBytes += D*planBytes + s.Targets*targetBytes + idleBytes
	s.MaxRankPlanBytes += planBytes + rankTargets*targetBytes + idleBytes
	return s
}

// mlaTargets counts MLA targets: all P per rank with L1.5, else the ranks of
// mlaTargetRange, which cover every prefill rank once when P >= D and give
// each decode rank one when D > P.
func (p *Planner) mlaTargets() (total, perRank int64) {
	P, D := int64(p.prefillTP), int64(p.decodeTP)
	switch {
	case p.layout.MLAL15Cache:
		return D * P, P
	case P >= D:
		return P, (P + D - 1) / D
	default:
		return D, 1
	}
}

// estimateFragments fills the fragment counts and fragment bytes of a
// fragmented layout and returns the bound on one rank's targets.
//
// A sharded buffer's decode shards (D of them, n units each) and distinct
// prefill shards (Q = P/replicaGroup of them, m units each) partition the
// same L units; a fragment is a non-empty intersection of one of each, i.e.
// a piece of their common refinement. The refinement's cut points are the
// multiples of n and of m inside (0, L), counted once when they coincide
// (multiples of lcm(n, m) = L/gcd(D, Q)), so there are D + Q - gcd(D, Q)
// pieces. One decode shard starting at offset r (mod m) meets
// ceil((r+n)/m) prefill shards; its offsets d*n mod m take every multiple of
// g = gcd(n, m), so the most any rank meets is ceil((n + m - g)/m). With
// multi-token pages each such piece is one fragment per token row when the
// slices are not whole rows (the counts are the same in units of rows).
func (p *Planner) estimateFragments(s *transferplan.PlanSize) (rankTargets int64) {
	P, D := int64(p.prefillTP), int64(p.decodeTP)
	classes := map[sourceClass]classSize{}
	var fragBytes, rankFragBytes int64
	for i := range p.pairs {
		pre, dec := &p.pairs[i].prefill, &p.pairs[i].decode
		var c sourceClass
		var n classSize
		if pre.Axis == AxisReplicated {
			c, n = sourceClass{replicated: true}, classSize{total: D, perRank: 1}
		} else {
			Q := P / int64(pre.ReplicaGroup)
			ps, ds := pre.shardLen(p.prefillTP), dec.shardLen(p.decodeTP)
			g := gcd(ps, ds)
			c = sourceClass{prefillShard: ps, replicaGroup: pre.ReplicaGroup, decodeShard: ds}
			n = classSize{total: D + Q - gcd(D, Q), perRank: (ds + ps - g + ps - 1) / ps}
		}
		classes[c] = n
		// Token-major pages cut each slice into one fragment per token row
		// (rows is 1 when slices are whole rows); the sources stay the same.
		rows := int64(p.pairs[i].rows)
		if rows < 1 {
			rows = 1
		}
		one := fragmentJSONFixed + transferplan.Digits(int64(pre.Index)) + int64(len(pre.Kind)) + transferplan.Digits(P-1) + transferplan.Digits(D-1) +
			transferplan.Digits(pre.ItemStrideBytes) + transferplan.Digits(dec.ItemStrideBytes) + 3*transferplan.Digits(max(pre.ItemStrideBytes, dec.ItemStrideBytes))
		s.Fragments += n.total * rows
		s.MaxRankFragments += n.perRank * rows
		fragBytes += n.total * rows * one
		rankFragBytes += n.perRank * rows * one
	}
	// A target is a source rank with at least one fragment; buffers of one
	// class share their sources, so each class adds at most its own count.
	var targets int64
	for _, n := range classes {
		targets += n.total
		rankTargets += n.perRank
	}
	s.Targets = min(targets, D*P)
	s.PlanBytes += fragBytes
	s.MaxRankPlanBytes += rankFragBytes
	return min(rankTargets, P)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// CheckBudget sizes the layout and checks it against the budget: a
// *LayoutError when the layout is incompatible, a *BudgetError when its plans
// are too large, the size either way when it could be computed.
func CheckBudget(l Layout, b transferplan.Budget) (transferplan.PlanSize, error) {
	s, err := EstimatePlanSize(l)
	if err != nil {
		return s, err
	}
	return s, b.Check(s)
}
