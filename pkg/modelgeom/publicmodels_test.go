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
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// Public models' config.json files as Hugging Face serves them (the keys
// that size the cache, others left out), which leave keys to their config
// class's defaults or store them under older names. The expected numbers
// are the models' published shapes, not the code's.
func TestParseConfigReadsClassDefaultsAndAliases(t *testing.T) {
	cases := []struct {
		name, config            string
		heads, kvHeads, headDim int64
		layers                  int64
	}{{
		// google/gemma-3-4b-it: text_config names only hidden_size and the
		// layers; Gemma3TextConfig gives 8 heads, 4 KV heads of 256.
		name:   "gemma-3-4b-it",
		config: `{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","text_config":{"hidden_size":2560,"intermediate_size":10240,"model_type":"gemma3_text","num_hidden_layers":34,"sliding_window":1024}}`,
		heads:  8, kvHeads: 4, headDim: 256, layers: 34,
	}, {
		// google/gemma-3-12b-it: head_dim is the class's 256, not 3840 / 16 = 240.
		name:   "gemma-3-12b-it",
		config: `{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","text_config":{"hidden_size":3840,"model_type":"gemma3_text","num_attention_heads":16,"num_hidden_layers":48,"num_key_value_heads":8,"sliding_window":1024}}`,
		heads:  16, kvHeads: 8, headDim: 256, layers: 48,
	}, {
		// bigcode/starcoder: GPTBigCode's n_head, n_layer, n_embd and
		// multi_query (one KV head).
		name:   "starcoder",
		config: `{"architectures":["GPTBigCodeForCausalLM"],"model_type":"gpt_bigcode","n_embd":6144,"n_head":48,"n_layer":40,"multi_query":true}`,
		heads:  48, kvHeads: 1, headDim: 128, layers: 40,
	}, {
		// tiiuae/falcon-40b: new_decoder_architecture, so n_head_kv, not multi_query.
		name:   "falcon-40b",
		config: `{"architectures":["FalconForCausalLM"],"model_type":"falcon","hidden_size":8192,"n_head":128,"n_head_kv":8,"n_layer":60,"new_decoder_architecture":true,"multi_query":true}`,
		heads:  128, kvHeads: 8, headDim: 64, layers: 60,
	}, {
		// THUDM/glm-4-9b-chat: ChatGLM's num_layers and multi_query_group_num.
		name:   "glm-4-9b-chat",
		config: `{"architectures":["ChatGLMModel"],"model_type":"chatglm","hidden_size":4096,"num_attention_heads":32,"num_layers":40,"multi_query_attention":true,"multi_query_group_num":2,"kv_channels":128}`,
		heads:  32, kvHeads: 2, headDim: 128, layers: 40,
	}, {
		// meta-llama/Llama-3.1-8B-Instruct: nothing left to defaults but head_dim (4096 / 32).
		name:   "Llama-3.1-8B-Instruct",
		config: `{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8}`,
		heads:  32, kvHeads: 8, headDim: 128, layers: 32,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := modelgeom.ParseConfig([]byte(c.config))
			if err != nil {
				t.Fatal(err)
			}
			if m.AttentionHeads != c.heads || m.KVHeads != c.kvHeads || m.HeadDim != c.headDim || m.Layers != c.layers {
				t.Fatalf("heads %d, KV heads %d, head_dim %d, layers %d; want %d, %d, %d, %d (%s)",
					m.AttentionHeads, m.KVHeads, m.HeadDim, m.Layers, c.heads, c.kvHeads, c.headDim, c.layers, m.Describe())
			}
			min, err := modelgeom.Minimal([]byte(c.config))
			if err != nil {
				t.Fatal(err)
			}
			mm, err := modelgeom.ParseConfig(min)
			if err != nil || mm.KVHeads != m.KVHeads || mm.AttentionHeads != m.AttentionHeads || mm.HeadDim != m.HeadDim || mm.Layers != m.Layers {
				t.Fatalf("Minimal %s reads differently: %v, %+v", min, err, mm)
			}
		})
	}
}

// zai-org/GLM-5 (GlmMoeDsaForCausalLM): the derivation does not model its
// DSA pool and ParseConfig refuses it; ParseShape reads its MLA shape for
// the rules that need no buffers.
func TestParseShapeReadsWhatTheDerivationDoesNotModel(t *testing.T) {
	glm5 := []byte(`{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","hidden_size":6144,"num_attention_heads":64,"num_key_value_heads":64,"num_hidden_layers":78,"kv_lora_rank":512,"qk_rope_head_dim":64,"index_topk":2048}`)
	if _, err := modelgeom.ParseConfig(glm5); err == nil {
		t.Fatal("ParseConfig derives GLM-5's buffers, which it does not model")
	}
	m, err := modelgeom.ParseShape(glm5)
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != modelgeom.FamilyMLA || m.AttentionHeads != 64 || m.Layers != 78 || m.LatentDim != 576 {
		t.Fatalf("GLM-5 read as %s", m.Describe())
	}
}
