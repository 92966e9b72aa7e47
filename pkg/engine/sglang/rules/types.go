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

// Backend is --disaggregation-transfer-backend.
type Backend string

const (
	// BackendMooncake is SGLang's default transfer backend.
	BackendMooncake Backend = "mooncake"
	// BackendNixl is the NIXL backend.
	BackendNixl Backend = "nixl"
)

// Model is the geometry the rules need, from the model's Hugging Face
// config.json.
type Model struct {
	// NumAttentionHeads is num_attention_heads.
	NumAttentionHeads int
	// NumKVHeads is num_key_value_heads (MLA: 1).
	NumKVHeads int
	// HeadDim is head_dim.
	HeadDim int
	// NumHiddenLayers is num_hidden_layers.
	NumHiddenLayers int
	// UseMLA: DeepSeek's latent attention (SGLang's is_mla_backend).
	UseMLA bool
	// SlidingWindowLayers is how many layers layer_types marks
	// sliding_attention (gpt-oss): SGLang gives such a model a hybrid SWA
	// pool, a SWA state component.
	SlidingWindowLayers int
	// DSAIndexer: the DeepSeek sparse-attention indexer (index_topk set): a
	// DSA state component.
	DSAIndexer bool
	// MambaLayers is how many layers are linear attention / Mamba
	// (Qwen3-Next): a MAMBA state component.
	MambaLayers int
}

// stateTypes are the state components SGLang's pool ships beside the KV
// cache (setup_state_kv_args), as the verdicts name them.
func (m Model) stateTypes() []string {
	var out []string
	if m.SlidingWindowLayers > 0 {
		out = append(out, "swa")
	}
	if m.MambaLayers > 0 {
		out = append(out, "mamba")
	}
	if m.DSAIndexer {
		out = append(out, "dsa")
	}
	return out
}

// Role is one side of the pair as SGLang is started on it.
type Role struct {
	// TP is --tp-size.
	TP int
	// DP is the DP-attention size (--dp-size with --enable-dp-attention);
	// 0 or 1: off.
	DP int
	// PP is --pp-size (0 is 1).
	PP int
	// PageSize is --page-size.
	PageSize int
	// KVCacheDtype is the literal --kv-cache-dtype ("" is "auto").
	KVCacheDtype string
}

func (r Role) dp() int { return max(1, r.DP) }
func (r Role) pp() int { return max(1, r.PP) }

// AttnTP is the attention TP size SGLang compares: TP / DP-attention size.
func (r Role) AttnTP() int { return r.TP / r.dp() }

func (r Role) dtype() string {
	if r.KVCacheDtype == "" {
		return "auto"
	}
	return r.KVCacheDtype
}

// Pair is a prefill/decode pair as SGLang's decode handshake sees it.
type Pair struct {
	Model   Model
	Prefill Role
	Decode  Role
	// Backend is --disaggregation-transfer-backend ("" is mooncake).
	Backend Backend
}
