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

package contract

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// Contract pairs are sized before they are planned, like v1 layouts: two
// 256 KiB contracts can describe a couple of thousand fields in up to 16
// parts each between 1024-rank fleets, tens of millions of fragments.

// EstimatePlanSize checks the pair (returning the engine's reason
// when it refuses it) and computes the size of its plans in time linear in
// the number of fields.
func EstimatePlanSize(pair Pair) (transferplan.PlanSize, error) {
	p, err := classifyPair(pair)
	if err != nil {
		return transferplan.PlanSize{}, err
	}
	return p.estimate(), nil
}

// CheckBudget sizes the pair and checks it against the budget: a
// *LayoutError when the engine refuses the pair, a *BudgetError when its
// plans are too large, the size either way when it could be computed.
func CheckBudget(pair Pair, b transferplan.Budget) (transferplan.PlanSize, error) {
	s, err := EstimatePlanSize(pair)
	if err != nil {
		return s, err
	}
	return s, b.Check(s)
}

var (
	contractFragmentJSONFixed = int64(len(`{"group_id":"","field_id":"","src_byte_offset":,"dst_byte_offset":,` +
		`"src_row_stride_bytes":,"dst_row_stride_bytes":,"bytes_per_row":,"rows_per_page":},`))
	contractTargetJSONExtra = int64(len(`,"contractFragments":[]`))
)

func (p *Planner) estimate() transferplan.PlanSize {
	P, D := int64(p.P), int64(p.D)
	s := transferplan.PlanSize{Kind: p.Kind(), DecodeTPRanks: p.D}
	rankTargets := int64(1)
	if p.P == p.D {
		s.Targets = D
	} else {
		rankTargets = p.estimateFragments(&s)
	}
	targetBytes := transferplan.TargetJSONFixedBytes + contractTargetJSONExtra + transferplan.Digits(P-1) + transferplan.Digits(D) + transferplan.Digits(P-1) + 1
	planBytes := transferplan.PlanJSONFixedBytes + transferplan.Digits(D-1) + max(transferplan.Digits(P-1), 4) + transferplan.Digits(P)
	idleBytes := P * (transferplan.Digits(P-1) + 1 + targetBytes) // rank 0 lists the idle ranks and has a dummy target for each
	s.PlanBytes += D*planBytes + s.Targets*targetBytes + idleBytes
	s.MaxRankPlanBytes += planBytes + rankTargets*targetBytes + idleBytes
	return s
}

// estimateFragments counts the fragments exactly: within one part of a
// sharded field the decode shards (n units each) and the distinct prefill
// shards (m units each) cut the part into distinctD + Q - gcd(distinctD, Q)
// pieces, each one fragment for every decode rank of the replica group
// holding it; one decode shard meets at most ceil((n + m - gcd(n, m))/m)
// prefill shards (see Planner.estimateFragments).
func (p *Planner) estimateFragments(s *transferplan.PlanSize) (rankTargets int64) {
	P, D := int64(p.P), int64(p.D)
	perRankByClass := map[string]int64{}
	totalByClass := map[string]int64{}
	var fragBytes, rankFragBytes int64
	for i := range p.segments {
		seg := &p.segments[i]
		one := contractFragmentJSONFixed + 6*int64(len(seg.groupID)+len(seg.fieldID)) + 6*transferplan.Digits(maxContractFieldBytes)
		var total, perRank int64
		if !seg.partitioned {
			total, perRank = D, 1
		} else {
			distinctD, distinctP := seg.distinctShards(seg.decodeShape), seg.distinctShards(seg.prefillShape)
			replicaD := D / distinctD
			for _, part := range seg.parts {
				n, m := part/distinctD, part/distinctP
				if n == 0 || m == 0 {
					continue
				}
				total += replicaD * (distinctD + distinctP - gcd(distinctD, distinctP))
				perRank += (n + m - gcd(n, m) + m - 1) / m
			}
		}
		key := contractSourceKey(seg)
		perRankByClass[key], totalByClass[key] = perRank, total
		s.Fragments += total
		s.MaxRankFragments += perRank
		fragBytes += total * one
		rankFragBytes += perRank * one
	}
	var targets int64
	for k, n := range perRankByClass {
		rankTargets += n
		targets += totalByClass[k]
	}
	s.Targets = min(targets, D*P)
	s.PlanBytes += fragBytes
	s.MaxRankPlanBytes += rankFragBytes
	return min(rankTargets, P)
}
