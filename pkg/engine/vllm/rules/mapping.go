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

import "slices"

// headsPerRank is what register_kv_caches gives a rank: max(1, K // tp)
// KV heads (the vllm#45330 fix: TP above the KV heads caps a rank at one).
func headsPerRank(m Model, tp int) int { return max(1, m.totalKVHeads()/tp) }

// dtypeBytes is bytes per element of a --kv-cache-dtype string; "auto" is
// the model's dtype, taken as bfloat16.
func dtypeBytes(dtype string) int {
	switch dtype {
	case "float32":
		return 4
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla":
		return 1
	}
	return 2
}

// blockBytes is one region's block length on a rank of role r: K and V
// packed, headsPerRank heads (MLA: the latent, one copy).
func blockBytes(m Model, r Role) int {
	if m.UseMLA {
		return r.BlockSize * (m.KVLoraRank + m.QKRopeHeadDim) * dtypeBytes(r.dtype())
	}
	return 2 * r.BlockSize * headsPerRank(m, r.TP) * m.HeadDim * dtypeBytes(r.dtype())
}

// handshakeTargets is TransferTopology.handshake_target_ranks (utils.py):
// decode TP ≥ prefill TP, one rank d·P // D; prefill larger, the P/D ranks
// of the decode rank's group.
func handshakeTargets(p Pair, d int) []int {
	P, D := p.Prefill.TP, p.Decode.TP
	if D >= P {
		return []int{d * P / D}
	}
	k := P / D
	out := make([]int, k)
	for i := range out {
		out[i] = d*k + i
	}
	return out
}

// attentionSources is compute_tp_mapping's attention reads
// (v1/nixl/tp_mapping.py): MLA or decode TP ≥ prefill TP, the one rank
// d·P // D; prefill larger, the first rank of each distinct KV head of the
// group (prefill rank r holds head r·K // P; np.unique drops repeats).
func attentionSources(p Pair, d int) []int {
	group := handshakeTargets(p, d)
	if p.Model.UseMLA || len(group) == 1 {
		return group[:1]
	}
	K, P := p.Model.totalKVHeads(), p.Prefill.TP
	var out []int
	last := -1
	for _, r := range group {
		if h := r * K / P; h != last {
			out = append(out, r)
			last = h
		}
	}
	return out
}

// stateSources is compute_tp_mapping's Mamba state ranks: prefill larger,
// every rank of the group (the state is sharded with no replication);
// otherwise the attention rank.
func stateSources(p Pair, d int) []int {
	if !p.Model.HasMamba {
		return nil
	}
	if prefillLarger(p) {
		return handshakeTargets(p, d)
	}
	return attentionSources(p, d)
}

// decodeRanks is every decode rank's targets: the handshake ranks, dummy
// where the rank reads neither attention nor state from them.
func decodeRanks(p Pair) []DecodeRank {
	out := make([]DecodeRank, p.Decode.TP)
	for d := range out {
		attn, state := attentionSources(p, d), stateSources(p, d)
		// A set: prefill TP 4096 → decode TP 1 reads up to 4096 ranks, and
		// looking each up in the lists would cost their square.
		read := make(map[int]bool, len(attn)+len(state))
		for _, r := range append(slices.Clip(attn), state...) {
			read[r] = true
		}
		var targets []Target
		for _, r := range handshakeTargets(p, d) {
			targets = append(targets, Target{PrefillTPRank: r, IsDummy: !read[r]})
		}
		out[d] = DecodeRank{DecodeTPRank: d, Targets: targets, AttentionFrom: attn, StateFrom: state}
	}
	return out
}

// localConsumers is TransferTopology.dcp_consumer_count: max(1, D / P).
func localConsumers(p Pair) int { return max(1, p.Decode.TP/p.Prefill.TP) }
