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

// Reason is a stable code for why vLLM's NixlConnector refuses a pair (or
// pdtopo refuses one vLLM accepts); usable verbatim as a condition reason.
type Reason string

// The reasons, in the order the engine checks (docs/engines/vllm.md, "The
// rules": the number in each comment).
const (
	// ReasonInvalidPair: a size is not positive, a layout is not HND or NHD,
	// or the model has no KV heads: not a pair any engine starts.
	ReasonInvalidPair Reason = "InvalidPair"
	// ReasonUnsupportedConnector: the kv connector is not NixlConnector.
	ReasonUnsupportedConnector Reason = "UnsupportedConnector"
	// ReasonTPNotDivisible (rule 1, tp-divisible): the larger TP is not a
	// multiple of the smaller.
	ReasonTPNotDivisible Reason = "TPNotDivisible"
	// ReasonEngineVersionMismatch (rule 2, compatibility-hash): the roles
	// run different vLLM versions, so the compatibility hashes differ.
	ReasonEngineVersionMismatch Reason = "EngineVersionMismatch"
	// ReasonKVCacheDtypeMismatch (rule 2, compatibility-hash): the literal
	// --kv-cache-dtype strings differ, so the compatibility hashes do.
	ReasonKVCacheDtypeMismatch Reason = "KVCacheDtypeMismatch"
	// ReasonBlockSizeNotMultiple (rule 6): decode --block-size is not a
	// multiple of prefill's.
	ReasonBlockSizeNotMultiple Reason = "BlockSizeNotMultiple"
	// ReasonReplicatedPrefillKV (rule 3): prefill TP above both decode TP
	// and the KV heads (prefill ranks hold replicated heads), not MLA nor
	// Mamba.
	ReasonReplicatedPrefillKV Reason = "ReplicatedPrefillKV"
	// ReasonKVCacheLayoutMismatch (rule 4): the roles' KV cache layouts
	// differ (not MLA).
	ReasonKVCacheLayoutMismatch Reason = "KVCacheLayoutMismatch"
	// ReasonLayoutNotBlockContiguous (rule 5): TP differs and heads are
	// split, but the layout is NHD, where a head range is not contiguous.
	ReasonLayoutNotBlockContiguous Reason = "LayoutNotBlockContiguous"
	// ReasonBlockSizeNotEqual (rule 7): prefill TP above decode TP needs
	// equal block sizes (not MLA nor Mamba).
	ReasonBlockSizeNotEqual Reason = "BlockSizeNotEqual"
	// ReasonBlockLengthMismatch (rule 9): a region's bytes per block do not
	// match the engine's formula; never expected of two roles of one model,
	// kept as a check of the geometry.
	ReasonBlockLengthMismatch Reason = "BlockLengthMismatch"
	// ReasonHeadSplitWithHeteroBlocks (rule 8): prefill TP above decode TP,
	// a decode rank reads its attention from several prefill ranks, and the
	// block sizes differ.
	ReasonHeadSplitWithHeteroBlocks Reason = "HeadSplitWithHeteroBlocks"
	// ReasonNHDMultiSourceRead: stricter than vLLM, which accepts it. NHD
	// with a decode rank gathering attention from several prefill ranks (a
	// hybrid Mamba model at prefill TP above the KV heads): vLLM cuts the
	// block in contiguous chunks, which in NHD are token ranges, not heads,
	// and reads the wrong bytes.
	ReasonNHDMultiSourceRead Reason = "NHDMultiSourceRead"
)

// Reasons is every Reason Judge can return, in declaration order; a test
// checks that it names every constant.
func Reasons() []Reason {
	return []Reason{
		ReasonInvalidPair,
		ReasonUnsupportedConnector,
		ReasonTPNotDivisible,
		ReasonEngineVersionMismatch,
		ReasonKVCacheDtypeMismatch,
		ReasonBlockSizeNotMultiple,
		ReasonReplicatedPrefillKV,
		ReasonKVCacheLayoutMismatch,
		ReasonLayoutNotBlockContiguous,
		ReasonBlockSizeNotEqual,
		ReasonBlockLengthMismatch,
		ReasonHeadSplitWithHeteroBlocks,
		ReasonNHDMultiSourceRead,
	}
}
