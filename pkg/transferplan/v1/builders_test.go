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

import (
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// layoutBuilder builds planner inputs that read like the scenario:
// mha(8, 4).kv(TargetK, 80, 512, 256).kv(TargetV, 80, 512, 256).build()
type layoutBuilder struct{ l Layout }

func mha(prefillTP, decodeTP int) *layoutBuilder {
	return &layoutBuilder{Layout{
		Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: prefillTP, DPSize: 1},
		Decode:  transferplan.Parallelism{TPSize: decodeTP, DPSize: 1},
	}}
}

func mla(prefillTP, decodeTP int) *layoutBuilder {
	b := mha(prefillTP, decodeTP)
	b.l.Attention = transferplan.MLA
	return b
}

func (b *layoutBuilder) dp(prefillDP, decodeDP int) *layoutBuilder {
	b.l.Prefill.DPSize, b.l.Decode.DPSize = prefillDP, decodeDP
	return b
}

func (b *layoutBuilder) l15() *layoutBuilder { b.l.MLAL15Cache = true; return b }

func (b *layoutBuilder) tokensPerPage(t int) *layoutBuilder { b.l.TokensPerPage = t; return b }

// kv adds count KV buffers of a kind whose decode item is decodeItem bytes with
// unit-byte units; the prefill item is the reference default.
func (b *layoutBuilder) kv(kind transferplan.BufferKind, count int, decodeItem, unit int64) *layoutBuilder {
	return b.kvItems(kind, count, decodeItem, b.defaultPrefill(decodeItem), unit)
}

// kvItems adds count KV buffers with explicit prefill and decode items.
func (b *layoutBuilder) kvItems(kind transferplan.BufferKind, count int, decodeItem, prefillItem, unit int64) *layoutBuilder {
	return b.kvUnits(kind, count, decodeItem, prefillItem, unit, unit)
}

func (b *layoutBuilder) kvUnits(kind transferplan.BufferKind, count int, decodeItem, prefillItem, decodeUnit, prefillUnit int64) *layoutBuilder {
	field := fmt.Sprintf("kvBuffers[%d]", b.groups())
	for range count {
		b.l.KVBuffers = append(b.l.KVBuffers, BufferSpec{Kind: kind, Field: field,
			DecodeItemBytes: decodeItem, PrefillItemBytes: prefillItem, DecodeUnitBytes: decodeUnit, PrefillUnitBytes: prefillUnit})
	}
	return b
}

// state adds count Mamba state buffers.
func (b *layoutBuilder) state(count int, decodeItem, prefillItem, unit int64) *layoutBuilder {
	field := fmt.Sprintf("stateBuffers[%d]", len(b.l.StateBuffers))
	for range count {
		b.l.StateBuffers = append(b.l.StateBuffers, BufferSpec{Kind: transferplan.MambaState, Field: field,
			DecodeItemBytes: decodeItem, PrefillItemBytes: prefillItem, DecodeUnitBytes: unit, PrefillUnitBytes: unit})
	}
	return b
}

// heads adds one layer-count of K and V buffers for a GQA model with the given
// number of KV heads, each head unit bytes per token, sharded over both sides
// (ranks beyond the head count replicate heads, as engines do). An item is
// tokensPerPage rows of the rank's heads (set tokensPerPage first).
func (b *layoutBuilder) heads(layers, kvHeads int, unit int64) *layoutBuilder { //nolint:unparam // the head size is spelled at each call, so a layout reads as the model it is; all use 256 today
	rows := int64(b.l.TokensPerPage)
	perRank := func(tp int) int64 { return rows * int64(max(1, kvHeads/tp)) * unit }
	d, p := perRank(b.l.Decode.TPPerDP()), perRank(b.l.Prefill.TPPerDP())
	return b.kvItems(transferplan.TargetK, layers, d, p, unit).kvItems(transferplan.TargetV, layers, d, p, unit)
}

func (b *layoutBuilder) defaultPrefill(decodeItem int64) int64 {
	if b.l.Attention == transferplan.MLA { // latent caches are whole on every rank
		return decodeItem
	}
	return DefaultPrefillItemBytes(decodeItem, b.l.Decode.TPPerDP(), b.l.Prefill.TPPerDP())
}

func (b *layoutBuilder) groups() int {
	n, last := 0, ""
	for _, buf := range b.l.KVBuffers {
		if buf.Field != last {
			n, last = n+1, buf.Field
		}
	}
	return n
}

func (b *layoutBuilder) build() Layout { return b.l }

// frag is a fragment literal in the order a person reads it.
func frag(buffer int, kind transferplan.BufferKind, src, dst int, srcStride, dstStride, srcOff, dstOff, n int64) transferplan.TransferFragment {
	return transferplan.TransferFragment{BufferIndex: buffer, BufferKind: kind, SrcRank: src, DstRank: dst,
		SrcPageStrideBytes: srcStride, DstPageStrideBytes: dstStride, SrcByteOffset: srcOff, DstByteOffset: dstOff, BytesPerPage: n}
}

func intp(v int) *int { return &v }
