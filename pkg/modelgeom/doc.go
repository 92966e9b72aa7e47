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

// Package modelgeom derives the KV-cache and recurrent-state buffer geometry
// of a prefill/decode pair from the model's Hugging Face config.json, the KV
// cache dtype, the page size and each role's tensor/data-parallel layout:
// the item and unit lengths every buffer has on each side, exactly as the
// reference engine (tokenspeed at conformance/tokenspeed.V1Commit)
// registers them for transfer.
//
// What the engine registers, per rank of a role with t = TP / DP attention
// ranks per data-parallel group and T tokens per page:
//
//   - MHA, GQA and MQA models: one K and one V buffer per attention layer
//     (all K layers, then all V layers), each page holding T token rows of
//     h = max(num_key_value_heads / t, 1) heads (heads are replicated when t
//     exceeds the KV heads); the item is T·h·head_dim·dtype bytes, the unit
//     one head of one token, head_dim·dtype bytes (its MHA pool).
//   - MLA models (kv_lora_rank set): one latent buffer per layer, the same
//     on every rank: T·(kv_lora_rank + qk_rope_head_dim)·dtype bytes; the
//     pool registers no unit length, so the unit is 1 byte (its MLA pool).
//   - Draft/MTP layers (num_nextn_predict_layers, mtp_num_hidden_layers)
//     add DraftK and DraftV buffers (one DraftK per layer for MLA) after the
//     target buffers, with the target's per-layer geometry.
//   - Hybrid gated-delta-net models (Qwen3.5): KV buffers for the full
//     attention layers only, and for every linear-attention layer a
//     convolution state (conv_dim/t channels of linear_conv_kernel_dim-1
//     bfloat16 taps) and a temporal state (linear_num_value_heads/t heads of
//     linear_key_head_dim × linear_value_head_dim float32 values), all
//     convolution layers first (its Mamba pool).
//
// Hugging Face's defaults apply: num_key_value_heads absent means MHA,
// head_dim absent means hidden_size / num_attention_heads, and head_dim wins
// when both are present. A config the derivation cannot use is refused with
// an *Error naming the key; nothing is guessed.
//
// The package imports only the standard library: it takes bytes and numbers
// and returns numbers or an *Error.
package modelgeom
