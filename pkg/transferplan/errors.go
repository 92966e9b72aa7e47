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

package transferplan

import (
	"errors"
	"fmt"
	"strings"
)

// Reason is a stable, machine-readable code for why a layout cannot be planned.
// Reasons are used verbatim as Kubernetes condition reasons.
type Reason string

const (
	// ReasonInvalidLayout: the input is structurally broken (sizes, dp not
	// dividing tp, K/V counts differ, no KV buffers). The CRD's CEL rules reject
	// these before they reach the planner.
	ReasonInvalidLayout Reason = "InvalidLayout"
	// ReasonUnitSizeMismatch: prefill and decode unit bytes differ.
	ReasonUnitSizeMismatch Reason = "UnitSizeMismatch"
	// ReasonItemNotUnitAligned: an item is not a whole number of units.
	ReasonItemNotUnitAligned Reason = "ItemNotUnitAligned"
	// ReasonUnsupportedHeterogeneousTP: the two sides hold different global
	// amounts and the buffer is neither replicated nor a GQA replica layout.
	ReasonUnsupportedHeterogeneousTP Reason = "UnsupportedHeterogeneousTP"
	// ReasonShardNotAligned: a buffer's logical size does not split evenly over
	// the ranks that hold distinct shards.
	ReasonShardNotAligned Reason = "ShardNotAligned"
	// ReasonItemSmallerThanShard: an item cannot hold its rank's shard.
	ReasonItemSmallerThanShard Reason = "ItemSmallerThanShard"
	// ReasonMLAL15RequiresMLA: the prefill runs the MLA L1.5 cache for a non-MLA model.
	ReasonMLAL15RequiresMLA Reason = "MLAL15RequiresMLA"
	// ReasonMLAItemSizeMismatch: an MLA buffer's item differs between prefill
	// and decode. MLA ranks hold whole latent caches and the prefill copies
	// whole items with its own item length on both sides, so the items must match.
	ReasonMLAItemSizeMismatch Reason = "MLAItemSizeMismatch"
	// ReasonWholeStateCopyUnsafe: a prefill rank would send a decode rank KV
	// fragments but no state fragment, and the prefill then copies every
	// state buffer whole, overwriting state that rank does not hold.
	ReasonWholeStateCopyUnsafe Reason = "WholeStateCopyUnsafe"
	// ReasonItemNotTokenAligned: pages hold several tokens and a decode rank
	// takes a head range of every token row, but an item is not a whole
	// number of rows of whole units, so rows have no byte boundaries.
	ReasonItemNotTokenAligned Reason = "ItemNotTokenAligned"
	// ReasonStridedPagesNeedProtocolV2 is retired: the planner no longer
	// returns it. Token-major pages are planned as one v1 fragment per token
	// row (see eachFragment). The constant stays so that conditions written
	// by older operators keep a documented meaning.
	ReasonStridedPagesNeedProtocolV2 Reason = "StridedPagesNeedProtocolV2"
	// ReasonRankOutOfRange: a plan was asked for a decode TP rank that does not exist.
	ReasonRankOutOfRange Reason = "RankOutOfRange"

	// Reasons of cache-contract pairs (the engine's later wire).

	// ReasonContractInvalid: the engine's contract decoder refuses the
	// bytes (not JSON, a missing or unknown key, an unknown dtype, a group
	// spec or partition that does not hold together).
	ReasonContractInvalid Reason = "ContractInvalid"
	// ReasonContractTooLarge: a contract is empty or longer than the
	// engine's 256 KiB, as sent or as the engine re-encodes it.
	ReasonContractTooLarge Reason = "ContractTooLarge"
	// ReasonContractUnsupportedValue: the engine decodes the contract, but a
	// value it computes with is not a positive integer (or a field id not a
	// string), so no transfer of it can work.
	ReasonContractUnsupportedValue Reason = "ContractUnsupportedValue"
	// ReasonContractTPOutOfRange: a role's TP size (per DP group) is not in
	// 1..1024, which the engine's planner refuses.
	ReasonContractTPOutOfRange Reason = "ContractTPOutOfRange"
	// ReasonContractMismatchPrefixGranularity: the two plans' prefix
	// granularities differ.
	ReasonContractMismatchPrefixGranularity Reason = "ContractMismatchPrefixGranularity"
	// ReasonContractMismatchGroupOrder: the cache groups differ in ids or order.
	ReasonContractMismatchGroupOrder Reason = "ContractMismatchGroupOrder"
	// ReasonContractMismatchGroupSemantics: a cache group's family, row
	// geometry, checkpoint granularity, retention, window or transfer
	// policy differs.
	ReasonContractMismatchGroupSemantics Reason = "ContractMismatchGroupSemantics"
	// ReasonContractMismatchFieldOrder: a group's fields differ in ids.
	ReasonContractMismatchFieldOrder Reason = "ContractMismatchFieldOrder"
	// ReasonContractMismatchFieldSemantics: a field's dtype, partition or
	// global shape differs.
	ReasonContractMismatchFieldSemantics Reason = "ContractMismatchFieldSemantics"
	// ReasonContractMismatchRankGeometry: with equal TP sizes a field's
	// rank-local shape or bytes differ.
	ReasonContractMismatchRankGeometry Reason = "ContractMismatchRankGeometry"
	// ReasonContractShardsNotDividingTP: a sharded field's distinct shards
	// (global extent / local extent) exceed or do not divide a role's TP size.
	ReasonContractShardsNotDividingTP Reason = "ContractShardsNotDividingTP"
	// ReasonContractNoSourceFragments: with unequal TP sizes a decode rank
	// would receive nothing (the groups hold no fields).
	ReasonContractNoSourceFragments Reason = "ContractNoSourceFragments"
)

// LayoutError says why a layout cannot be planned: a stable reason, the spec
// field it concerns (e.g. "kvBuffers[0]"), the numbers that caused it and
// the change that would fix it.
type LayoutError struct {
	Reason Reason
	// Field is the path of the offending part of the spec, e.g. "kvBuffers[1]",
	// "stateBuffers[0]", "decode.dataParallelSize"; empty when the whole layout is concerned.
	Field string
	// Message is a sentence a person can act on, naming the field and
	// numbers; it ends with ". Fix: " and the Fix.
	Message string
	// Fix is the change that would make the layout plannable, worked out
	// from the layout (the TP sizes that would work, the item or unit sizes
	// that would match), e.g. "decode TP 1, 2, 4 or 8 per DP group (keeping
	// prefill TP 2) would work with these 8 KV heads per token row".
	Fix string
}

func (e *LayoutError) Error() string { return string(e.Reason) + ": " + e.Message }

// WithFix sets the error's fix and ends its message with it; an error that
// has a fix keeps it. Callers that know more than the layout (a model-aware
// pair knows its model) replace Fix with ReplaceFix.
func (e *LayoutError) WithFix(fix string) *LayoutError {
	if fix == "" || e.Fix != "" {
		return e
	}
	e.Fix = fix
	e.Message = strings.TrimSuffix(e.Message, ".") + ". Fix: " + fix
	return e
}

// ReplaceFix swaps the error's fix (and the end of its message) for another.
func (e *LayoutError) ReplaceFix(fix string) *LayoutError {
	if e.Fix != "" {
		e.Message = strings.TrimSuffix(e.Message, ". Fix: "+e.Fix)
		e.Fix = ""
	}
	return e.WithFix(fix)
}

// LayoutErrorf builds a LayoutError whose message starts with the field:
// how every planner states a refusal.
func LayoutErrorf(reason Reason, field, format string, args ...any) *LayoutError {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &LayoutError{Reason: reason, Field: field, Message: msg}
}

// IsInvalidLayout reports whether err says the input itself is malformed (as
// opposed to a well-formed pair of layouts that cannot exchange KV cache).
func IsInvalidLayout(err error) bool {
	var le *LayoutError
	return errors.As(err, &le) && le.Reason == ReasonInvalidLayout
}
