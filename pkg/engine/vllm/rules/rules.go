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

import "fmt"

// Judge is vLLM's verdict on the pair, as the decode side's handshake would
// reach it on the first request, with pdtopo's stricter refusal where the
// engine would read the wrong bytes. A refusal names its fix.
func Judge(p Pair) Verdict {
	if r := check(p); r != nil {
		return Verdict{Refusal: r.withFix(fixFor(p, r.Reason)), Conditions: conditions}
	}
	return Verdict{DecodeRanks: decodeRanks(p), LocalConsumers: localConsumers(p), Conditions: conditions}
}

// check runs the rules in the engine's order (docs/engines/vllm.md): 1,
// then 2 per prefill rank asked, then 6, then 3, 4, 5, 7 and 9, then 8;
// then pdtopo's own. The first that fails is the verdict.
func check(p Pair) *Refusal {
	for _, rule := range []func(Pair) *Refusal{
		checkValid,
		checkTPDivisible,
		checkVersion,
		checkDtype,
		checkBlockMultiple,
		checkReplicatedPrefillKV,
		checkSameLayout,
		checkBlockContiguous,
		checkEqualBlockPrefillLarger,
		checkBlockLength,
		checkHeadSplitHeteroBlocks,
		checkNHDMultiSource,
	} {
		if r := rule(p); r != nil {
			return r
		}
	}
	return nil
}

func refusal(reason Reason, field, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// checkValid refuses what no engine starts with.
func checkValid(p Pair) *Refusal {
	switch {
	case p.KVConnector != "" && p.KVConnector != Connector:
		return refusal(ReasonUnsupportedConnector, "kvConnector",
			"%q is not NixlConnector, the only vLLM connector pdtopo judges", p.KVConnector)
	case p.Prefill.TP < 1 || p.Decode.TP < 1:
		return refusal(ReasonInvalidPair, "tensorParallelSize", "prefill TP %d, decode TP %d: both must be at least 1", p.Prefill.TP, p.Decode.TP)
	case p.Prefill.BlockSize < 1 || p.Decode.BlockSize < 1:
		return refusal(ReasonInvalidPair, "blockSize", "prefill --block-size %d, decode %d: both must be at least 1", p.Prefill.BlockSize, p.Decode.BlockSize)
	case !p.Model.UseMLA && p.Model.NumKVHeads < 1:
		return refusal(ReasonInvalidPair, "model.numKVHeads", "%d KV heads: a non-MLA model has at least one", p.Model.NumKVHeads)
	}
	for _, r := range []struct {
		name string
		l    Layout
	}{{"prefill", p.Prefill.layout()}, {"decode", p.Decode.layout()}} {
		if r.l != LayoutHND && r.l != LayoutNHD {
			return refusal(ReasonInvalidPair, r.name+".kvCacheLayout", "%q is neither HND nor NHD", r.l)
		}
	}
	return nil
}

// prefillLarger: prefill TP > decode TP, the direction vLLM's negative
// tp_ratio names.
func prefillLarger(p Pair) bool { return p.Prefill.TP > p.Decode.TP }

// kvReplicated is TransferTopology.is_kv_replicated (utils.py) of the
// prefill: its TP above the KV heads, so its ranks repeat heads.
func kvReplicated(p Pair) bool { return p.Prefill.TP > p.Model.totalKVHeads() }

// Rule 1: utils.py, TransferTopology.tp_ratio (from handshake_target_ranks):
// asserts the larger TP is a multiple of the smaller.
func checkTPDivisible(p Pair) *Refusal {
	hi, lo := max(p.Prefill.TP, p.Decode.TP), min(p.Prefill.TP, p.Decode.TP)
	if hi%lo != 0 {
		return refusal(ReasonTPNotDivisible, "decode.tensorParallelSize",
			"prefill TP %d and decode TP %d: vLLM needs the larger TP to be a multiple of the smaller", p.Prefill.TP, p.Decode.TP)
	}
	return nil
}

// Rule 2: v1/nixl/metadata.py, compute_nixl_compatibility_hash, compared in
// v1/nixl/base_worker.py, NixlBaseConnectorWorker._nixl_handshake: the hash
// covers vllm.__version__ (its first factor, vllm_version, beside
// NIXL_CONNECTOR_VERSION, which a version fixes). Compared only when both
// roles say their version.
func checkVersion(p Pair) *Refusal {
	if p.Prefill.Version == "" || p.Decode.Version == "" || p.Prefill.Version == p.Decode.Version {
		return nil
	}
	return refusal(ReasonEngineVersionMismatch, "decode.engineVersion",
		"prefill runs vLLM %s, decode vLLM %s: NixlConnector hashes vllm.__version__ into its handshake (compute_nixl_compatibility_hash), so every handshake between them fails",
		p.Prefill.Version, p.Decode.Version)
}

// Rule 2: v1/nixl/metadata.py, compute_nixl_compatibility_hash, compared in
// v1/nixl/base_worker.py, NixlBaseConnectorWorker._nixl_handshake: the hash
// covers the literal --kv-cache-dtype string.
func checkDtype(p Pair) *Refusal {
	if p.Prefill.dtype() != p.Decode.dtype() {
		return refusal(ReasonKVCacheDtypeMismatch, "decode.kvCacheDtype",
			"prefill --kv-cache-dtype %q, decode %q: vLLM's compatibility hash compares the strings, so the handshake fails even where the bytes agree",
			p.Prefill.dtype(), p.Decode.dtype())
	}
	return nil
}

// Rule 6: utils.py, TransferTopology.block_size_ratio (in add_remote_agent):
// asserts the local (decode) block size is divisible by the remote's.
func checkBlockMultiple(p Pair) *Refusal {
	if p.Decode.BlockSize%p.Prefill.BlockSize != 0 {
		return refusal(ReasonBlockSizeNotMultiple, "decode.blockSize",
			"decode --block-size %d is not a multiple of prefill --block-size %d", p.Decode.BlockSize, p.Prefill.BlockSize)
	}
	return nil
}

// Rule 3: v1/nixl/base_worker.py, _validate_remote_agent_handshake (with
// TransferTopology.is_kv_replicated): a bare assert that prefill KV is not
// replicated when prefill TP is larger, skipped for MLA and Mamba.
func checkReplicatedPrefillKV(p Pair) *Refusal {
	if p.Model.UseMLA || p.Model.HasMamba || !prefillLarger(p) || !kvReplicated(p) {
		return nil
	}
	return refusal(ReasonReplicatedPrefillKV, "prefill.tensorParallelSize",
		"prefill TP %d is above both decode TP %d and the model's %d KV heads: prefill ranks hold replicated heads, which vLLM cannot read into fewer decode ranks (a bare assert, no message in the engine's log)",
		p.Prefill.TP, p.Decode.TP, p.Model.totalKVHeads())
}

// Rule 4: _validate_remote_agent_handshake: the resolved layouts equal on
// both roles (not MLA), at any TP.
func checkSameLayout(p Pair) *Refusal {
	if p.Model.UseMLA || p.Prefill.layout() == p.Decode.layout() {
		return nil
	}
	return refusal(ReasonKVCacheLayoutMismatch, "decode.kvCacheLayout",
		"prefill VLLM_KV_CACHE_LAYOUT %s, decode %s: vLLM needs the same layout on both roles", p.Prefill.layout(), p.Decode.layout())
}

// Rule 5: _validate_remote_agent_handshake with
// KVCacheLayout.is_block_contiguous (vllm/v1/kv_cache_layout.py): TP
// differs, not MLA, prefill KV not replicated: heads are split, and the
// layout must keep a head range contiguous.
func checkBlockContiguous(p Pair) *Refusal {
	if p.Model.UseMLA || p.Prefill.TP == p.Decode.TP || kvReplicated(p) || p.Decode.layout().blockContiguous() {
		return nil
	}
	return refusal(ReasonLayoutNotBlockContiguous, "decode.kvCacheLayout",
		"prefill TP %d and decode TP %d split the %d KV heads, and %s is not block-contiguous (a head range of a block is not one run)",
		p.Prefill.TP, p.Decode.TP, p.Model.totalKVHeads(), p.Decode.layout())
}

// Rule 7: _validate_remote_agent_handshake: prefill TP larger, not MLA nor
// Mamba, prefill KV not replicated: the block sizes must be equal.
func checkEqualBlockPrefillLarger(p Pair) *Refusal {
	if p.Model.UseMLA || p.Model.HasMamba || kvReplicated(p) || !prefillLarger(p) || p.Prefill.BlockSize == p.Decode.BlockSize {
		return nil
	}
	return refusal(ReasonBlockSizeNotEqual, "decode.blockSize",
		"prefill TP %d is above decode TP %d, where vLLM needs equal block sizes; prefill --block-size %d, decode %d",
		p.Prefill.TP, p.Decode.TP, p.Prefill.BlockSize, p.Decode.BlockSize)
}

// Rule 9: _validate_remote_agent_handshake's per-region block lengths.
// MLA regions equal up to the block ratio; attention regions remote ==
// local × remote_heads // local_heads // ratio. The lengths follow from rules 1–8 for two roles of one model,
// so this is a check of the geometry pdtopo computes.
func checkBlockLength(p Pair) *Refusal {
	local, remote := blockBytes(p.Model, p.Decode), blockBytes(p.Model, p.Prefill)
	bsr := p.Decode.BlockSize / p.Prefill.BlockSize
	if bsr == 0 || p.Decode.BlockSize%p.Prefill.BlockSize != 0 {
		return nil // rule 6's to refuse; no ratio to check lengths by
	}
	want := local / bsr
	if !p.Model.UseMLA {
		// With one head a rank on both sides this is local / bsr too.
		want = local * headsPerRank(p.Model, p.Prefill.TP) / headsPerRank(p.Model, p.Decode.TP) / bsr
	}
	if remote != want {
		return refusal(ReasonBlockLengthMismatch, "model",
			"a prefill rank's block is %d bytes, a decode rank's %d: vLLM expects %d", remote, local, want)
	}
	return nil
}

// Rule 8: v1/nixl/base_worker.py, _build_local_splits_from_plan (in
// add_remote_agent): prefill TP larger, a decode rank's attention read from
// several prefill ranks, block sizes differ. Hybrid Mamba models, which
// skip rule 7, meet it.
func checkHeadSplitHeteroBlocks(p Pair) *Refusal {
	if !prefillLarger(p) || p.Model.UseMLA || p.Prefill.BlockSize == p.Decode.BlockSize {
		return nil
	}
	if n := len(attentionSources(p, 0)); n > 1 {
		return refusal(ReasonHeadSplitWithHeteroBlocks, "decode.blockSize",
			"prefill TP %d → decode TP %d: each decode rank reads its attention heads from %d prefill ranks, which vLLM cannot do with different block sizes (prefill %d, decode %d)",
			p.Prefill.TP, p.Decode.TP, n, p.Prefill.BlockSize, p.Decode.BlockSize)
	}
	return nil
}

// pdtopo's own (docs/engines/vllm.md, "Faults of the engine pdtopo does
// not copy"): vLLM skips rule 5 when prefill KV is replicated, so a Mamba
// hybrid at prefill TP above the KV heads gathers heads from several
// prefill ranks into one NHD block by cutting it in contiguous chunks
// (_build_local_splits_from_plan), which in NHD are token ranges.
func checkNHDMultiSource(p Pair) *Refusal {
	if p.Model.UseMLA || p.Decode.layout().blockContiguous() || !prefillLarger(p) {
		return nil
	}
	if n := len(attentionSources(p, 0)); n > 1 {
		r := refusal(ReasonNHDMultiSourceRead, "decode.kvCacheLayout",
			"prefill TP %d → decode TP %d: each decode rank gathers attention from %d prefill ranks into one NHD block; vLLM accepts this but cuts the block into token ranges where it means heads and reads the wrong bytes (pdtopo is stricter than the engine here)",
			p.Prefill.TP, p.Decode.TP, n)
		r.StricterThanEngine = true
		return r
	}
	return nil
}
