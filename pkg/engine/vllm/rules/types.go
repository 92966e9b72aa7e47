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

// Connector is the only kv connector these rules describe: vLLM's
// NixlConnector (NixlPullConnector), where the decode side reads.
const Connector = "NixlConnector"

// Layout is the value of VLLM_KV_CACHE_LAYOUT on a role.
type Layout string

const (
	// LayoutHND is vLLM's legacy name of LBHNC: heads outside tokens in a
	// block, so a head range is contiguous; NixlConnector's default.
	LayoutHND Layout = "HND"
	// LayoutNHD is vLLM's legacy name of LBNHC: tokens outside heads.
	LayoutNHD Layout = "NHD"
)

// blockContiguous reports KVCacheLayout.is_block_contiguous of
// vllm/v1/kv_cache_layout.py (commit VLLM_KV_CACHE_LAYOUT_COMMIT): [H, N, C]
// innermost, so a head range of a block is one contiguous run.
func (l Layout) blockContiguous() bool { return l == LayoutHND }

// Model is the geometry the rules need, from the model's Hugging Face
// config.json.
type Model struct {
	// NumHiddenLayers is num_hidden_layers.
	NumHiddenLayers int
	// NumAttentionHeads is num_attention_heads.
	NumAttentionHeads int
	// NumKVHeads is num_key_value_heads (MLA: ignored, vLLM uses 1).
	NumKVHeads int
	// HeadDim is head_dim (or hidden_size / num_attention_heads).
	HeadDim int
	// UseMLA: DeepSeek's latent attention (kv_lora_rank set).
	UseMLA bool
	// KVLoraRank and QKRopeHeadDim are the MLA latent's parts.
	KVLoraRank, QKRopeHeadDim int
	// SlidingWindow is sliding_window of a hybrid sliding-window model
	// (gpt-oss), 0 otherwise. vLLM's rules treat its layers as attention.
	SlidingWindow int
	// HasMamba: a hybrid Mamba / linear-attention model (Qwen3-Next).
	HasMamba bool
	// FullAttentionInterval: hybrid Mamba, one attention layer in this many.
	FullAttentionInterval int
}

// totalKVHeads is the KV head count TransferTopology is built with: 1 for
// MLA (register_kv_caches), the config's otherwise.
func (m Model) totalKVHeads() int {
	if m.UseMLA {
		return 1
	}
	return m.NumKVHeads
}

// Role is one side of the pair as vLLM is started on it.
type Role struct {
	// TP is --tensor-parallel-size.
	TP int
	// BlockSize is --block-size (taken as the kernel block size too).
	BlockSize int
	// KVCacheLayout is VLLM_KV_CACHE_LAYOUT ("" is HND, NixlConnector's
	// default on non-MLA models).
	KVCacheLayout Layout
	// KVCacheDtype is the literal --kv-cache-dtype string ("" is "auto").
	KVCacheDtype string
	// Version is the role's vllm.__version__ ("": not known, not
	// compared).
	Version string
}

func (r Role) layout() Layout {
	if r.KVCacheLayout == "" {
		return LayoutHND
	}
	return r.KVCacheLayout
}

func (r Role) dtype() string {
	if r.KVCacheDtype == "" {
		return "auto"
	}
	return r.KVCacheDtype
}

// Pair is a prefill/decode pair as vLLM's decode-side handshake sees it.
type Pair struct {
	Model   Model
	Prefill Role
	Decode  Role
	// KVConnector is --kv-transfer-config's kv_connector ("" is
	// NixlConnector).
	KVConnector string
}
