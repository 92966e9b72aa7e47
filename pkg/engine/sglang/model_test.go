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

package sglang

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/sglang/rules"
)

// Public models' config.json read as SGLang reads them, judged at prefill
// TP 1 → decode TP 4 (page 16, auto, mooncake): SGLang refuses a non-MLA
// model with a hybrid SWA pool at different attention TP, and its pool is
// decided by the architecture (model_config.is_hybrid_swa_model), not by
// whether the config names sliding-window layers.
func TestModelHybridSWAIsSGLangsArchitectureList(t *testing.T) {
	for _, c := range []struct {
		name, config string
		refused      bool
	}{
		// llm-d#2433's model: GptOssForCausalLM, alternating layer_types.
		{"gpt-oss-120b", `{"architectures":["GptOssForCausalLM"],"model_type":"gpt_oss","num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"num_hidden_layers":2,"sliding_window":128,"layer_types":["sliding_attention","full_attention"]}`, true},
		// Llama 4: chunked attention, no layer_types in its config.json,
		// and a hybrid SWA pool in SGLang.
		{"Llama-4-Scout", `{"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4","text_config":{"model_type":"llama4_text","attention_chunk_size":8192,"head_dim":128,"hidden_size":5120,"num_attention_heads":40,"num_key_value_heads":8,"num_hidden_layers":48}}`, true},
		// Gemma 3 slides on five layers of six, in a full-size pool.
		{"gemma-3-27b-it", `{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","text_config":{"model_type":"gemma3_text","head_dim":128,"hidden_size":5376,"num_attention_heads":32,"num_key_value_heads":16,"num_hidden_layers":62,"sliding_window":1024}}`, false},
		// The same with layer_types written out (transformers ≥ 4.53 saves them).
		{"gemma-3 with layer_types", `{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","head_dim":256,"hidden_size":1152,"num_attention_heads":4,"num_key_value_heads":1,"num_hidden_layers":2,"sliding_window":512,"layer_types":["sliding_attention","full_attention"]}`, false},
		// Mistral-7B-v0.1: a sliding window on every layer, no SWA pool.
		{"Mistral-7B-v0.1", `{"architectures":["MistralForCausalLM"],"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"sliding_window":4096}`, false},
		// zai-org/GLM-5: MLA with a DSA indexer (an architecture the buffer
		// derivation does not model, read all the same): MLA is exempt.
		{"GLM-5", `{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","hidden_size":6144,"num_attention_heads":64,"num_key_value_heads":64,"num_hidden_layers":78,"kv_lora_rank":512,"qk_rope_head_dim":64,"index_topk":2048}`, false},
		// Qwen3-Next: Mamba state is sliced per tensor and passes.
		{"Qwen3-Next-80B-A3B", `{"architectures":["Qwen3NextForCausalLM"],"model_type":"qwen3_next","num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"num_hidden_layers":48,"full_attention_interval":4}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := pdv1.PDPairSpec{Model: &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(c.config)}}}
			cfg, err := engine.ReadHFConfig(spec, engine.Inputs{})
			if err != nil {
				t.Fatal(err)
			}
			m := model(cfg)
			v := rules.Judge(rules.Pair{Model: m, Prefill: rules.Role{TP: 1, PageSize: 16}, Decode: rules.Role{TP: 4, PageSize: 16}, Backend: rules.BackendMooncake})
			refused := !v.Compatible() && v.Refusal.Reason == rules.ReasonHybridStateTPMismatch
			if refused != c.refused || (!c.refused && !v.Compatible()) {
				t.Fatalf("model %+v: verdict %+v; SGLang refuses: %t", m, v.Refusal, c.refused)
			}
		})
	}
}
