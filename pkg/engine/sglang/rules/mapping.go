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

// prefillRanks is common/conn.py, CommonKVManager._resolve_rank_mapping
// over attention TP, for the decode rank whose attention TP rank is a:
// d == p, rank a; d > p, rank a // (d // p); d < p, the k = p // d ranks
// a·k … a·k + k − 1, all read (non-MLA) or the first read and the others
// only notified (MLA). Also SGLang's required_dst_info_num and the base of
// required_prefill_response_num.
func prefillRanks(p Pair, a int) (ranks []int, dummy func(i int) bool, dstInfo, responses int) {
	pa, da := p.Prefill.AttnTP(), p.Decode.AttnTP()
	switch {
	case da == pa:
		return []int{a}, func(int) bool { return false }, 1, 1
	case da > pa:
		return []int{a / (da / pa)}, func(int) bool { return false }, da / pa, 1
	}
	k := pa / da
	ranks = make([]int, k)
	for i := range ranks {
		ranks[i] = a*k + i
	}
	if p.Model.UseMLA {
		return ranks, func(i int) bool { return i > 0 }, 1, 1
	}
	return ranks, func(int) bool { return false }, 1, k
}

// decodeRanks is every decode rank's targets, PP stage by stage. Decode PP
// equal to prefill's reads its own stage; decode PP 1 reads each target at
// every prefill stage, highest first, and waits for that many more
// answers (_resolve_rank_mapping).
func decodeRanks(p Pair) []DecodeRank {
	var out []DecodeRank
	da := p.Decode.AttnTP()
	for pp := range p.Decode.pp() {
		stages := []int{pp}
		if p.Decode.pp() == 1 && p.Prefill.pp() > 1 {
			stages = stages[:0]
			for s := p.Prefill.pp() - 1; s >= 0; s-- {
				stages = append(stages, s)
			}
		}
		for r := range p.Decode.TP {
			ranks, dummy, dstInfo, responses := prefillRanks(p, r%da)
			var targets []Target
			for i, t := range ranks {
				for _, s := range stages {
					targets = append(targets, Target{PrefillTPRank: t, PrefillPPRank: s, IsDummy: dummy(i)})
				}
			}
			out = append(out, DecodeRank{
				DecodeTPRank: r, DecodePPRank: pp, DecodeAttnTPRank: r % da, Targets: targets,
				RequiredDstInfoNum: dstInfo, RequiredPrefillResponseNum: responses * len(stages),
			})
		}
	}
	return out
}

// Counts are the numbers of a compatible pair's mapping, as decodeRanks
// would give them, counted from the layout: every decode rank has as many
// targets (SGLang's mapping is regular).
type Counts struct {
	// DecodeRanks is decode TP × decode PP.
	DecodeRanks int64
	// Targets is one decode rank's targets: its prefill ranks × the stages
	// it reads each at; Reads the targets it reads (not dummies).
	Targets, Reads int
	// DstInfo is required_dst_info_num; Responses
	// required_prefill_response_num.
	DstInfo, Responses int
}

// Count is decodeRanks' numbers without mapping a rank (the same cases as
// prefillRanks and decodeRanks, in arithmetic).
func Count(p Pair) Counts {
	pa, da := p.Prefill.AttnTP(), p.Decode.AttnTP()
	stages := 1
	if p.Decode.pp() == 1 && p.Prefill.pp() > 1 {
		stages = p.Prefill.pp()
	}
	c := Counts{DecodeRanks: int64(p.Decode.TP) * int64(p.Decode.pp()), DstInfo: 1, Responses: stages}
	switch {
	case da == pa:
		c.Targets, c.Reads = stages, stages
	case da > pa:
		c.Targets, c.Reads, c.DstInfo = stages, stages, da/pa
	case p.Model.UseMLA:
		k := pa / da
		c.Targets, c.Reads = k*stages, stages
	default:
		k := pa / da
		c.Targets, c.Reads, c.Responses = k*stages, k*stages, k*stages
	}
	return c
}

// Idle are the prefill attention-TP ranks no decode rank reads, counted:
// only MLA with prefill attention TP k times decode's leaves any (decode
// rank a reads rank a·k and only notifies the k − 1 after it).
func Idle(p Pair) []int {
	pa, da := p.Prefill.AttnTP(), p.Decode.AttnTP()
	out := []int{}
	if !p.Model.UseMLA || pa <= da || Refuse(p) != nil {
		return out
	}
	k := pa / da
	for r := range pa {
		if r%k != 0 {
			out = append(out, r)
		}
	}
	return out
}
