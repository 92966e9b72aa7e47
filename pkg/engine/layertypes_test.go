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

package engine_test

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

func readConfig(t *testing.T, config string) *engine.HFConfig {
	t.Helper()
	spec := pdv1.PDPairSpec{Model: &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(config)}}}
	c, err := engine.ReadHFConfig(spec, engine.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Public models' config.json as Hugging Face serves them (shortened to the
// keys that matter): most hybrids carry no layer_types, and their layers'
// kinds follow from the keys their config class derives it from. The
// counts are the models' published layer plans.
func TestLayerTypesOfPublicModels(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         map[string]int
		arch         []string
	}{{
		// Qwen/Qwen3-Next-80B-A3B-Instruct: 48 layers, every fourth full attention.
		name:   "Qwen3-Next-80B-A3B",
		config: `{"architectures":["Qwen3NextForCausalLM"],"model_type":"qwen3_next","num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"num_hidden_layers":48,"full_attention_interval":4,"linear_conv_kernel_dim":4}`,
		want:   map[string]int{"full_attention": 12, "linear_attention": 36},
		arch:   []string{"Qwen3NextForCausalLM"},
	}, {
		// ai21labs/Jamba-v0.1: 32 layers, attention at 4, 12, 20, 28.
		name:   "Jamba-v0.1",
		config: `{"architectures":["JambaForCausalLM"],"model_type":"jamba","num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"num_hidden_layers":32,"attn_layer_period":8,"attn_layer_offset":4,"mamba_d_state":16}`,
		want:   map[string]int{"full_attention": 4, "linear_attention": 28},
	}, {
		// A Nemotron-H hybrid_override_pattern: M Mamba, * attention, - MLP.
		name:   "Nemotron-H",
		config: `{"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h","num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":12,"hybrid_override_pattern":"M-M*-M-MM*-M"}`,
		want:   map[string]int{"full_attention": 2, "linear_attention": 6},
	}, {
		// openai/gpt-oss-20b: layer_types alternates, 24 layers.
		name:   "gpt-oss-20b",
		config: `{"architectures":["GptOssForCausalLM"],"model_type":"gpt_oss","num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"num_hidden_layers":4,"sliding_window":128,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"]}`,
		want:   map[string]int{"full_attention": 2, "sliding_attention": 2},
	}, {
		// google/gemma-3-27b-it: 62 layers, every sixth global.
		name:   "gemma-3-27b-it",
		config: `{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","text_config":{"model_type":"gemma3_text","head_dim":128,"hidden_size":5376,"num_attention_heads":32,"num_key_value_heads":16,"num_hidden_layers":62,"sliding_window":1024}}`,
		want:   map[string]int{"full_attention": 10, "sliding_attention": 52},
		arch:   []string{"Gemma3ForConditionalGeneration"},
	}, {
		// google/gemma-2-9b-it: 42 layers alternating, the first sliding.
		name:   "gemma-2-9b-it",
		config: `{"architectures":["Gemma2ForCausalLM"],"model_type":"gemma2","head_dim":256,"hidden_size":3584,"num_attention_heads":16,"num_key_value_heads":8,"num_hidden_layers":42,"sliding_window":4096}`,
		want:   map[string]int{"full_attention": 21, "sliding_attention": 21},
	}, {
		// meta-llama/Llama-4-Scout-17B-16E-Instruct: chunked attention on
		// three layers of four (no_rope_layers empty: the class default).
		name:   "Llama-4-Scout",
		config: `{"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4","text_config":{"model_type":"llama4_text","attention_chunk_size":8192,"head_dim":128,"hidden_size":5120,"num_attention_heads":40,"num_key_value_heads":8,"num_hidden_layers":48,"no_rope_layers":[]}}`,
		want:   map[string]int{"chunked_attention": 36, "full_attention": 12},
		arch:   []string{"Llama4ForConditionalGeneration"},
	}, {
		// ibm-granite/granite-4.0-h-tiny: layer_types says mamba and attention.
		name:   "granite-4.0-h",
		config: `{"architectures":["GraniteMoeHybridForCausalLM"],"model_type":"granitemoehybrid","num_attention_heads":12,"num_key_value_heads":4,"hidden_size":1536,"num_hidden_layers":4,"layer_types":["mamba","mamba","mamba","attention"]}`,
		want:   map[string]int{"full_attention": 1, "linear_attention": 3},
	}, {
		// meta-llama/Llama-3.1-8B-Instruct: one kind throughout.
		name:   "Llama-3.1-8B",
		config: `{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32}`,
		want:   map[string]int{},
		arch:   []string{"LlamaForCausalLM"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := readConfig(t, c.config)
			if got := cfg.LayerTypes(); !maps.Equal(got, c.want) {
				t.Errorf("LayerTypes = %v, want %v", got, c.want)
			}
			if c.arch != nil && !slices.Equal(cfg.Architectures(), c.arch) {
				t.Errorf("Architectures = %v, want %v", cfg.Architectures(), c.arch)
			}
		})
	}
}
