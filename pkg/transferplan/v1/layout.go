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

// BufferSpec is the resolved geometry of one buffer on both sides: bytes of one
// page on one rank (item) and bytes of the smallest movable piece (unit).
type BufferSpec struct {
	Kind transferplan.BufferKind
	// Field is the spec path of the group the buffer came from, e.g.
	// "kvBuffers[2]"; it names the buffer in errors.
	Field            string
	PrefillItemBytes int64
	DecodeItemBytes  int64
	PrefillUnitBytes int64
	DecodeUnitBytes  int64
}

// label names a buffer in messages: its group field and kind.
func (b BufferSpec) label() string {
	if b.Field == "" {
		return string(b.Kind)
	}
	return fmt.Sprintf("%s (%s)", b.Field, b.Kind.SpecName())
}

// Layout is everything the planner needs about a prefill/decode pair.
type Layout struct {
	Attention   transferplan.AttentionBackend
	MLAL15Cache bool
	// TokensPerPage is the number of tokens in one KV page (token-major).
	TokensPerPage int
	Prefill       transferplan.Parallelism
	Decode        transferplan.Parallelism
	// KVBuffers are in the engine's pointer order: buffer index = position.
	KVBuffers []BufferSpec
	// StateBuffers are a second index space: buffer index = position.
	StateBuffers []BufferSpec
}

// Limits that keep a hostile or mistyped layout from exhausting memory; they
// are far above any real deployment (and mirrored by the CRD's validation).
// transferplan.MaxTPSize bounds the TP sizes.
const (
	// MaxBuffers bounds the KV buffers, and separately the state buffers.
	MaxBuffers = 16384
	// MaxItemBytes bounds item and unit sizes so that unit arithmetic cannot overflow.
	MaxItemBytes = 1 << 40
)

// DefaultPrefillItemBytes is the prefill item length the reference assumes
// when the prefill side does not report one: decodeItem * D / P with per-DP TP
// sizes, integer division. It is 0 (an invalid item) when prefillTPPerDP < 1.
func DefaultPrefillItemBytes(decodeItemBytes int64, decodeTPPerDP, prefillTPPerDP int) int64 {
	if prefillTPPerDP < 1 {
		return 0
	}
	return decodeItemBytes * int64(decodeTPPerDP) / int64(prefillTPPerDP)
}

// Validate rejects structurally broken layouts with ReasonInvalidLayout. The
// CRD's CEL rules enforce the same, so objects from the API server pass.
func (l Layout) Validate() error {
	if l.Attention != transferplan.MHA && l.Attention != transferplan.MLA {
		return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "attentionBackend", "must be MHA or MLA, got %q", l.Attention).
			WithFix("set attentionBackend to MLA for latent-attention models (DeepSeek V2/V3, Kimi K2), MHA for every other (also GQA and MQA)")
	}
	if l.TokensPerPage < 1 {
		return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "tokensPerPage", "must be at least 1, got %d", l.TokensPerPage).
			WithFix("set tokensPerPage to the engines' page size in tokens (--block-size), 1 or more")
	}
	if err := l.Prefill.Validate("prefill"); err != nil {
		return err
	}
	if err := l.Decode.Validate("decode"); err != nil {
		return err
	}
	if l.MLAL15Cache && l.Attention != transferplan.MLA {
		return transferplan.LayoutErrorf(transferplan.ReasonMLAL15RequiresMLA, "mlaL15Cache",
			"the prefill runs the MLA L1.5 cache but attentionBackend is %s; L1.5 is only supported for MLA models", l.Attention).
			WithFix("set mlaL15Cache to false (and start the prefill without --enable-mla-l1-5-cache), or attentionBackend to MLA if the model is an MLA model")
	}
	if len(l.KVBuffers) == 0 {
		return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "kvBuffers", "at least one KV buffer is required").
			WithFix("give the model (spec.model) or its KV buffer groups (spec.kvBuffers)")
	}
	if len(l.KVBuffers) > MaxBuffers || len(l.StateBuffers) > MaxBuffers {
		return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "kvBuffers", "%d KV and %d state buffers; at most %d of each are supported",
			len(l.KVBuffers), len(l.StateBuffers), MaxBuffers).
			WithFix(fmt.Sprintf("give one buffer per layer: no model has more than %d", MaxBuffers))
	}
	for i, b := range l.KVBuffers {
		if !b.Kind.IsKV() {
			return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, fieldOr(b.Field, fmt.Sprintf("kvBuffers[%d]", i)), "kind %q is not a KV buffer kind", b.Kind).
				WithFix("use TargetK, TargetV, DraftK or DraftV")
		}
		if err := b.validate(); err != nil {
			return err
		}
	}
	for _, b := range l.StateBuffers {
		if b.Kind != transferplan.MambaState {
			return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, b.Field, "state buffers must have kind %q, got %q", transferplan.MambaState, b.Kind).
				WithFix(fmt.Sprintf("give state buffers kind %q", transferplan.MambaState))
		}
		if err := b.validate(); err != nil {
			return err
		}
	}
	if l.Attention == transferplan.MHA {
		return l.validateKVPairs()
	}
	return nil
}

func fieldOr(field, fallback string) string {
	if field != "" {
		return field
	}
	return fallback
}

func (b BufferSpec) validate() error {
	for _, v := range []struct {
		name string
		val  int64
	}{
		{"decodeItemBytes", b.DecodeItemBytes},
		{"prefillItemBytes", b.PrefillItemBytes},
		{"decodeUnitBytes", b.DecodeUnitBytes},
		{"prefillUnitBytes", b.PrefillUnitBytes},
	} {
		if v.val <= 0 || v.val > MaxItemBytes {
			return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, fieldOr(b.Field, string(b.Kind))+"."+v.name, "must be between 1 and %d, got %d", int64(MaxItemBytes), v.val).
				WithFix(fmt.Sprintf("set %s to the bytes of one page of one buffer on one rank (items) or of one head of one token (units), 1 to %d", v.name, int64(MaxItemBytes)))
		}
	}
	return nil
}

// validateKVPairs checks that every MHA layer has both a K and a V buffer.
func (l Layout) validateKVPairs() error {
	count := map[transferplan.BufferKind]int{}
	for _, b := range l.KVBuffers {
		count[b.Kind]++
	}
	for _, pair := range [][2]transferplan.BufferKind{{transferplan.TargetK, transferplan.TargetV}, {transferplan.DraftK, transferplan.DraftV}} {
		if count[pair[0]] != count[pair[1]] {
			return transferplan.LayoutErrorf(transferplan.ReasonInvalidLayout, "kvBuffers",
				"MHA needs one %s buffer per %s buffer: %d %s, %d %s",
				pair[1].SpecName(), pair[0].SpecName(), count[pair[0]], pair[0].SpecName(), count[pair[1]], pair[1].SpecName()).
				WithFix(fmt.Sprintf("give the %s and %s groups the same count, one buffer of each per layer (%d), or attentionBackend MLA if the model is an MLA model",
					pair[0].SpecName(), pair[1].SpecName(), max(count[pair[0]], count[pair[1]])))
		}
	}
	return nil
}

// kvWalkOrder lists KV buffer indices in planning order: layer by layer (the
// j-th K buffer, then the j-th V buffer of the same family), target layers
// before draft layers.
func kvWalkOrder(kv []BufferSpec) []int {
	byKind := map[transferplan.BufferKind][]int{}
	for i, b := range kv {
		byKind[b.Kind] = append(byKind[b.Kind], i)
	}
	order := make([]int, 0, len(kv))
	for _, family := range [][2]transferplan.BufferKind{{transferplan.TargetK, transferplan.TargetV}, {transferplan.DraftK, transferplan.DraftV}} {
		ks, vs := byKind[family[0]], byKind[family[1]]
		for j := 0; j < max(len(ks), len(vs)); j++ {
			if j < len(ks) {
				order = append(order, ks[j])
			}
			if j < len(vs) {
				order = append(order, vs[j])
			}
		}
	}
	return order
}

// bufferErrorf builds a LayoutError about one buffer: the message starts with
// its group, kind and index, e.g. "kvBuffers[0] (TargetK) buffer 3: ...".
func bufferErrorf(reason transferplan.Reason, b BufferSpec, index int, format string, args ...any) *transferplan.LayoutError {
	return &transferplan.LayoutError{
		Reason:  reason,
		Field:   b.Field,
		Message: fmt.Sprintf("%s buffer %d: ", b.label(), index) + fmt.Sprintf(format, args...),
	}
}
