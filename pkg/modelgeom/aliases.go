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

package modelgeom

// keyAliases are the names older config classes store the derivation's
// keys under, which their attribute_map maps to the canonical names
// (GPT-2, GPTBigCode, Falcon and Bloom: n_head, n_layer, n_embd; MPT:
// n_heads, n_layers, d_model; ChatGLM: num_layers). A key is read under an
// alias only when the canonical name is absent.
var keyAliases = map[string][]string{
	"num_attention_heads": {"n_head", "n_heads"},
	"num_hidden_layers":   {"num_layers", "n_layer", "n_layers"},
	"hidden_size":         {"n_embd", "d_model"},
}

// kvHeadKeys are where a config keeps its KV head count, in the order the
// engines look (vLLM's and SGLang's ModelConfig.get_total_num_kv_heads):
// Falcon's n_head_kv and num_kv_heads, then num_key_value_heads, then
// ChatGLM's multi_query_group_num.
var kvHeadKeys = []string{"n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num"}

// falconModelTypes are the Falcon model types whose multi_query flag the
// engines ignore when new_decoder_architecture is set (they read n_head_kv).
var falconModelTypes = map[string]bool{"falcon": true, "RefinedWeb": true, "RefinedWebModel": true}

func init() {
	// Minimal keeps every key the derivation reads, aliases included.
	for _, names := range keyAliases {
		configKeys = append(configKeys, names...)
	}
	configKeys = append(configKeys, "n_head_kv", "num_kv_heads", "multi_query_group_num", "multi_query", "new_decoder_architecture")
}

// kvHeads reads the KV head count as the engines do: one for multi-query
// attention (multi_query, but not a new-decoder Falcon), MPT's and DBRX's
// attn_config.kv_n_heads, else the first of kvHeadKeys present. key names
// where the count was looked for, for notes and errors.
func (r *reader) kvHeads(m *Model) (kv int64, key string, ok bool, err error) {
	if mq, _ := r.text["multi_query"].(bool); mq {
		if nd, _ := r.top["new_decoder_architecture"].(bool); !nd || !falconModelTypes[m.ModelType] {
			m.Notes = append(m.Notes, "multi_query: one KV head")
			return 1, r.prefix + "multi_query", true, nil
		}
	}
	if m.ModelType == "dbrx" || m.ModelType == "mpt" {
		// These keep their KV head count in attn_config.kv_n_heads.
		attn, _ := r.top["attn_config"].(map[string]any)
		kv, ok, err = intIn(attn, "attn_config.", "kv_n_heads", 1, maxHeads)
		return kv, "attn_config.kv_n_heads", ok, err
	}
	for _, k := range kvHeadKeys {
		if kv, ok, err = intIn(r.text, r.prefix, k, 1, maxHeads); ok || err != nil {
			return kv, r.prefix + k, ok, err
		}
	}
	return 0, r.prefix + "num_key_value_heads", false, nil
}

// classDefault is what a config class supplies for keys its config.json
// omits; whose names the class in notes.
type classDefault struct {
	heads, kvHeads, headDim, layers int64
	whose                           string
}

// classDefaults, by the text config's model_type. gemma3_text:
// transformers' Gemma3TextConfig (num_attention_heads 8,
// num_key_value_heads 4, head_dim 256, num_hidden_layers 26), which
// gemma-3-4b-it's text_config leaves to the class entirely and
// gemma-3-12b-it's for head_dim (256, not hidden_size 3840 / 16).
var classDefaults = map[string]classDefault{
	"gemma3_text": {heads: 8, kvHeads: 4, headDim: 256, layers: 26, whose: "Gemma3TextConfig"},
}

// textModelType is the text config's model_type (text_config's for a
// multimodal model), else the top level's.
func (r *reader) textModelType() string {
	if s, ok := r.text["model_type"].(string); ok && s != "" {
		return s
	}
	return r.str("model_type")
}
