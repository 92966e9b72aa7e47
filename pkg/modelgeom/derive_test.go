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

package modelgeom_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// Public model configs, cut to the keys the derivation reads plus
// architectures and model_type (values as published on Hugging Face).
const (
	// meta-llama/Llama-3.1-70B: GQA, no head_dim (8192 / 64 = 128).
	llama31_70B = `{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
		"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80}`
	// Qwen/Qwen3-32B: GQA whose head_dim (128) is not hidden_size / heads (80).
	qwen3_32B = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
		"hidden_size": 5120, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 64}`
	// huggyllama/llama-7b: MHA from before GQA, no num_key_value_heads, no head_dim.
	llama7B = `{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
		"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32}`
	// google/gemma-2b: MQA, one KV head.
	gemma2B = `{"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
		"hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256, "num_hidden_layers": 18}`
	// deepseek-ai/DeepSeek-V3: MLA with one MTP layer.
	deepseekV3 = `{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
		"hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61,
		"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 1}`
	// Qwen/Qwen3.5-27B: hybrid gated delta-net, its text config nested.
	qwen35_27B = `{"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
		"text_config": {"model_type": "qwen3_5_text", "hidden_size": 5120, "num_attention_heads": 24, "num_key_value_heads": 4,
		"head_dim": 256, "num_hidden_layers": 64, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
		"linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
		"mtp_num_hidden_layers": 1}}`
)

func opts(dtype string, tokensPerPage, prefillTP, decodeTP int) modelgeom.Options {
	return modelgeom.Options{KVCacheDtype: dtype, TokensPerPage: tokensPerPage,
		Prefill: modelgeom.Role{TP: prefillTP, DP: 1}, Decode: modelgeom.Role{TP: decodeTP, DP: 1}}
}

// g is a buffer group as a PDPair lists it: kind, count, decode item,
// prefill item, decode unit, prefill unit.
type g struct {
	kind                               string
	count                              int
	decItem, preItem, decUnit, preUnit int64
}

func groups(gs []modelgeom.Group) []g {
	out := make([]g, len(gs))
	for i, x := range gs {
		out[i] = g{x.Kind, x.Count, x.DecodeItemBytes, x.PrefillItemBytes, x.DecodeUnitBytes, x.PrefillUnitBytes}
	}
	return out
}

// The expected buffers are worked out by hand from the engine's pools: an
// MHA page of one layer on one rank is tokensPerPage × max(kvHeads / TP, 1)
// heads × head_dim × dtype bytes and its unit one head of one token; an MLA
// page is tokensPerPage × (kv_lora_rank + qk_rope_head_dim) × dtype bytes on
// every rank, unit 1 (the MLA pool registers none); Mamba convolution state
// is conv_dim / TP channels × (kernel - 1) bf16 taps, unit one channel, and
// temporal state linear_num_value_heads / TP heads × key × value float32
// values, unit one head.
func TestDeriveFamilies(t *testing.T) {
	perRoleDtype := opts("bfloat16", 1, 8, 4)
	perRoleDtype.Prefill.KVCacheDtype = "fp8"
	dp := opts("bfloat16", 1, 16, 16)
	dp.Decode.DP = 8 // 2 ranks per DP group
	noDraft := 0
	mlaNoDraft := opts("bfloat16", 1, 16, 8)
	mlaNoDraft.DraftLayers = &noDraft
	cases := []struct {
		name      string
		config    string
		o         modelgeom.Options
		attention string
		kv, state []g
	}{{
		// head_dim = 8192 / 64 = 128, unit = 128 × 2 B = 256.
		// prefill: 8 heads / 8 ranks = 1 head → 1 × 1 × 256 = 256;
		// decode: 8 / 4 = 2 heads → 1 × 2 × 256 = 512.
		name: "dense GQA Llama-3.1-70B bf16 P8 D4", config: llama31_70B, o: opts("bfloat16", 1, 8, 4), attention: "MHA",
		kv: []g{{"TargetK", 80, 512, 256, 256, 256}, {"TargetV", 80, 512, 256, 256, 256}},
	}, {
		// head_dim 128 wins over 5120 / 64 = 80; fp8: unit = 128 × 1 B = 128.
		// prefill: 8 / 2 = 4 heads → 16 tokens × 4 × 128 = 8192;
		// decode: 8 / 8 = 1 head → 16 × 1 × 128 = 2048.
		name: "dense GQA Qwen3-32B head_dim wins fp8 16 tokens P2 D8", config: qwen3_32B, o: opts("float8_e4m3fn", 16, 2, 8), attention: "MHA",
		kv: []g{{"TargetK", 64, 2048, 8192, 128, 128}, {"TargetV", 64, 2048, 8192, 128, 128}},
	}, {
		// No num_key_value_heads: 32 KV heads; head_dim = 4096 / 32 = 128, unit 256.
		// prefill: 32 / 2 = 16 heads → 16 × 256 = 4096; decode: 32 / 4 = 8 → 2048.
		name: "MHA without head_dim llama-7b P2 D4", config: llama7B, o: opts("bfloat16", 1, 2, 4), attention: "MHA",
		kv: []g{{"TargetK", 32, 2048, 4096, 256, 256}, {"TargetV", 32, 2048, 4096, 256, 256}},
	}, {
		// One KV head of 256 × 2 B = 512: every rank holds it whole (max(1/4, 1) = 1).
		name: "MQA gemma-2b P4 D1", config: gemma2B, o: opts("bfloat16", 1, 4, 1), attention: "MHA",
		kv: []g{{"TargetK", 18, 512, 512, 512, 512}, {"TargetV", 18, 512, 512, 512, 512}},
	}, {
		// Latent: (512 + 64) × 2 B = 1152 per token, whole on every rank;
		// 61 target layers and 1 MTP layer.
		name: "MLA with MTP DeepSeek-V3 bf16 P16 D8", config: deepseekV3, o: opts("bfloat16", 1, 16, 8), attention: "MLA",
		kv: []g{{"TargetK", 61, 1152, 1152, 1, 1}, {"DraftK", 1, 1152, 1152, 1, 1}},
	}, {
		// 64 tokens × 576 × 1 B (fp8) = 36864.
		name: "MLA DeepSeek-V3 fp8 64 tokens P8 D4", config: deepseekV3, o: opts("fp8_e4m3", 64, 8, 4), attention: "MLA",
		kv: []g{{"TargetK", 61, 36864, 36864, 1, 1}, {"DraftK", 1, 36864, 36864, 1, 1}},
	}, {
		name: "MLA DeepSeek-V3 without the draft model", config: deepseekV3, o: mlaNoDraft, attention: "MLA",
		kv: []g{{"TargetK", 61, 1152, 1152, 1, 1}},
	}, {
		// TP 16 above 8 KV heads: max(8 / 16, 1) = 1 head (replicated in pairs)
		// → 256; decode 8 / 2 = 4 heads → 1024.
		name: "TP above KV heads Llama-3.1-70B P16 D2", config: llama31_70B, o: opts("bfloat16", 1, 16, 2), attention: "MHA",
		kv: []g{{"TargetK", 80, 1024, 256, 256, 256}, {"TargetV", 80, 1024, 256, 256, 256}},
	}, {
		// DP attention: decode TP16 DP8 is 2 ranks per group → 4 heads → 1024;
		// prefill TP16 DP1 → 1 head (replicated) → 256.
		name: "DP attention Llama-3.1-70B P16 D16/8", config: llama31_70B, o: dp, attention: "MHA",
		kv: []g{{"TargetK", 80, 1024, 256, 256, 256}, {"TargetV", 80, 1024, 256, 256, 256}},
	}, {
		// prefill fp8: unit 128, item 1 head × 128 = 128; decode bf16: unit 256, 2 heads → 512.
		name: "per-role dtype Llama-3.1-70B fp8 prefill", config: llama31_70B, o: perRoleDtype, attention: "MHA",
		kv: []g{{"TargetK", 80, 512, 128, 256, 128}, {"TargetV", 80, 512, 128, 256, 128}},
	}, {
		// 64 layers, every 4th full attention: 16 KV layers, 48 linear.
		// KV unit 256 × 2 = 512; prefill 4 / 4 = 1 head → 512, decode 4 / 2 = 2 → 1024.
		// One MTP layer: DraftK/DraftV with the same geometry.
		// conv_dim = 128 × 16 × 2 + 128 × 48 = 10240 channels of 3 bf16 taps
		// (unit 6): prefill 10240 / 4 × 6 = 15360, decode 10240 / 2 × 6 = 30720.
		// temporal: unit 128 × 128 × 4 = 65536; prefill 48 / 4 = 12 heads →
		// 786432, decode 24 heads → 1572864.
		name: "hybrid Qwen3.5-27B bf16 P4 D2", config: qwen35_27B, o: opts("bfloat16", 1, 4, 2), attention: "MHA",
		kv: []g{{"TargetK", 16, 1024, 512, 512, 512}, {"TargetV", 16, 1024, 512, 512, 512},
			{"DraftK", 1, 1024, 512, 512, 512}, {"DraftV", 1, 1024, 512, 512, 512}},
		state: []g{{"", 48, 30720, 15360, 6, 6}, {"", 48, 1572864, 786432, 65536, 65536}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := modelgeom.Derive([]byte(c.config), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Attention != c.attention {
				t.Errorf("attention %s, want %s", p.Attention, c.attention)
			}
			if got := groups(p.KVBuffers); !reflect.DeepEqual(got, c.kv) {
				t.Errorf("kvBuffers\n got %+v\nwant %+v", got, c.kv)
			}
			if got := groups(p.StateBuffers); !reflect.DeepEqual(got, c.state) && (len(got) > 0 || len(c.state) > 0) {
				t.Errorf("stateBuffers\n got %+v\nwant %+v", got, c.state)
			}
		})
	}
}

// Minimal keeps exactly what the derivation reads: the same buffers for
// every model and layout of the table, from a config with unrelated keys
// (a vocabulary, a quantization section) dropped.
func TestMinimalConfigDerivesTheSame(t *testing.T) {
	for _, c := range []string{llama31_70B, qwen3_32B, llama7B, gemma2B, deepseekV3, qwen35_27B} {
		padded := c[:len(c)-1] + `, "vocab_size": 128256, "rope_scaling": {"factor": 8.0}, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}`
		min, err := modelgeom.Minimal([]byte(padded))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(min, []byte("vocab_size")) || bytes.Contains(min, []byte("quantization_config")) {
			t.Errorf("Minimal kept unread keys: %s", min)
		}
		for _, o := range []modelgeom.Options{opts("bfloat16", 16, 8, 4), opts("fp8", 1, 2, 2)} {
			want, err1 := modelgeom.Derive([]byte(padded), o)
			got, err2 := modelgeom.Derive(min, o)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(groups(got.KVBuffers), groups(want.KVBuffers)) ||
				!reflect.DeepEqual(groups(got.StateBuffers), groups(want.StateBuffers)) || got.Attention != want.Attention {
				t.Errorf("%s: minimal %s derives %+v (%v), the config %+v (%v)", c, min, got, err2, want, err1)
			}
		}
	}
}
