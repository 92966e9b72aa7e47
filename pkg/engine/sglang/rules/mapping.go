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
