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

package vllm

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/vllm/rules"
)

// Hybrid Mamba models as their config.json files are served (no
// layer_types): vLLM's _validate_remote_agent_handshake exempts a worker
// with Mamba groups from the replicated-prefill-KV refusal, so a prefill
// TP above both the KV heads and decode's TP is accepted for them and
// refused for a dense model of the same heads.
func TestModelReadsHybridMambaWithoutLayerTypes(t *testing.T) {
	for _, c := range []struct {
		name, config string
		ptp, dtp     int
		mamba        bool
	}{
		// Qwen/Qwen3-Next-80B-A3B-Instruct, 2 KV heads: prefill TP 4 → decode TP 2.
		{"Qwen3-Next-80B-A3B", `{"architectures":["Qwen3NextForCausalLM"],"model_type":"qwen3_next","num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"num_hidden_layers":48,"full_attention_interval":4}`, 4, 2, true},
		// ai21labs/Jamba-v0.1, 8 KV heads: prefill TP 16 → decode TP 8.
		{"Jamba-v0.1", `{"architectures":["JambaForCausalLM"],"model_type":"jamba","num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"num_hidden_layers":32,"attn_layer_period":8,"attn_layer_offset":4}`, 16, 8, true},
		// nvidia/Nemotron-H-8B-Base-8K, 8 KV heads: prefill TP 16 → decode TP 8.
		{"Nemotron-H-8B", `{"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h","num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":8,"hybrid_override_pattern":"M-M-M*-M"}`, 16, 8, true},
		// Qwen/Qwen2.5-7B-Instruct, 4 KV heads, dense: prefill TP 8 → decode TP 4 refused.
		{"Qwen2.5-7B", `{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":3584,"num_attention_heads":28,"num_key_value_heads":4,"num_hidden_layers":28}`, 8, 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := pdv1.PDPairSpec{Model: &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(c.config)}}}
			cfg, err := engine.ReadHFConfig(spec, engine.Inputs{})
			if err != nil {
				t.Fatal(err)
			}
			m := model(cfg)
			v := rules.Judge(rules.Pair{Model: m, KVConnector: rules.Connector,
				Prefill: rules.Role{TP: c.ptp, BlockSize: 16, KVCacheLayout: rules.LayoutHND},
				Decode:  rules.Role{TP: c.dtp, BlockSize: 16, KVCacheLayout: rules.LayoutHND}})
			if m.HasMamba != c.mamba || v.Compatible() != c.mamba {
				t.Fatalf("model %+v: HasMamba %t, verdict %+v; want Mamba %t, accepted %t", m, m.HasMamba, v.Refusal, c.mamba, c.mamba)
			}
			if !c.mamba && v.Refusal.Reason != rules.ReasonReplicatedPrefillKV {
				t.Fatalf("dense model refused by %s, want %s", v.Refusal.Reason, rules.ReasonReplicatedPrefillKV)
			}
		})
	}
}
