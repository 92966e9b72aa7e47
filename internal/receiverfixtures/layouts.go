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

// Package receiverfixtures builds the prefill/decode layouts that the
// receiver agent's tests, benchmarks and demos run against: each function is
// one scenario named by its layout, so that a test reads like the pairing it
// exercises.
package receiverfixtures

import (
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Buffers returns n layers of K and V buffers (target kinds, pointer order:
// all K, then all V) with the given per-rank item and unit bytes.
func Buffers(layers int, prefillItem, decodeItem, unit int64) []transferplan.BufferSpec {
	var out []transferplan.BufferSpec
	for _, kind := range []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV} {
		for i := 0; i < layers; i++ {
			out = append(out, transferplan.BufferSpec{
				Kind: kind, Field: fmt.Sprintf("%s[%d]", kind, i),
				PrefillItemBytes: prefillItem, DecodeItemBytes: decodeItem,
				PrefillUnitBytes: unit, DecodeUnitBytes: unit,
			})
		}
	}
	return out
}

// MHA is a non-MLA layout with P prefill and D decode ranks (DP 1 unless
// changed) and the given buffers.
func MHA(p, d int, kv []transferplan.BufferSpec) transferplan.Layout {
	return transferplan.Layout{
		Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill:   transferplan.Parallelism{TPSize: p, DPSize: 1},
		Decode:    transferplan.Parallelism{TPSize: d, DPSize: 1},
		KVBuffers: kv,
	}
}

// Identity is P4→D4 with identical sharding: one target per decode rank.
func Identity() transferplan.Layout {
	return MHA(4, 4, Buffers(2, 1024, 1024, 128))
}

// FragmentedP8D4 is 8 KV heads of 128 bytes, one head per prefill rank and
// two per decode rank: each decode rank pulls from two prefill ranks.
func FragmentedP8D4() transferplan.Layout {
	return MHA(8, 4, Buffers(2, 128, 256, 128))
}

// FragmentedP8D4Tokens16 is FragmentedP8D4 with 16-token pages
// (token-major): each decode rank takes one head of each of a page's 16 token
// rows from each of its two prefill ranks, one fragment per row.
func FragmentedP8D4Tokens16() transferplan.Layout {
	l := MHA(8, 4, Buffers(2, 16*128, 16*256, 128))
	l.TokensPerPage = 16
	return l
}

// ReplicatedGQAP4D1 has 2 KV heads: prefill ranks come in replica groups of
// two holding the same head, the single decode rank holds both heads, so
// prefill ranks 1 and 3 are idle and decode rank 0 must release them.
func ReplicatedGQAP4D1() transferplan.Layout {
	return MHA(4, 1, Buffers(2, 128, 256, 128))
}

// MLA builds an MLA layout where every rank holds the whole latent cache.
func MLA(p, d int, l15 bool) transferplan.Layout {
	return transferplan.Layout{
		Attention: transferplan.MLA, MLAL15Cache: l15, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: p, DPSize: 1},
		Decode:  transferplan.Parallelism{TPSize: d, DPSize: 1},
		KVBuffers: []transferplan.BufferSpec{
			{Kind: transferplan.TargetK, Field: "kvBuffers[0]", PrefillItemBytes: 576, DecodeItemBytes: 576, PrefillUnitBytes: 1, DecodeUnitBytes: 1},
			{Kind: transferplan.TargetK, Field: "kvBuffers[0]", PrefillItemBytes: 576, DecodeItemBytes: 576, PrefillUnitBytes: 1, DecodeUnitBytes: 1},
		},
	}
}

// MLAP8D2 gives each decode rank four prefill ranks: the first is the real
// source, the other three get dummy messages.
func MLAP8D2() transferplan.Layout { return MLA(8, 2, false) }

// MLAL15P2D2 has the prefill run the MLA L1.5 cache: every decode rank
// pulls from every prefill rank and needs all of them to answer.
func MLAL15P2D2() transferplan.Layout { return MLA(2, 2, true) }

// DPAttention is P4 (DP 2, so 2 TP ranks per group) → D2 identity: the dp
// group of a room is room % 2.
func DPAttention() transferplan.Layout {
	l := MHA(4, 2, Buffers(2, 1024, 1024, 128))
	l.Prefill.DPSize = 2
	return l
}

// MustPlan plans a layout that is known to be compatible.
func MustPlan(l transferplan.Layout) *transferplan.PlanSet {
	s, err := transferplan.Plan(l)
	if err != nil {
		panic(err)
	}
	return s
}
