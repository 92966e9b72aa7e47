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

import (
	"bytes"
	"encoding/json"
)

// configKeys are every key the derivation reads, at the top of a config and
// inside its text_config, beside architectures and model_type.
var configKeys = []string{
	"num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size", "num_hidden_layers", "num_layers",
	"kv_lora_rank", "qk_rope_head_dim", "num_nextn_predict_layers", "mtp_num_hidden_layers",
	"full_attention_interval", "linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim",
	"linear_num_key_heads", "linear_num_value_heads", "attn_config",
}

// ConfigKeys lists the keys the derivation reads (besides architectures and
// model_type), for people and for Minimal.
func ConfigKeys() []string { return append([]string(nil), configKeys...) }

// Minimal keeps of a config only what the derivation reads, plus
// architectures, model_type and extraKeys (the keys another reader needs,
// pkg/engine's HFConfigKeys): the same buffers and verdicts from a config a
// fraction of the size, for a PDPair to carry inline. The config must parse (call
// ParseConfig or ParseShape first for its error).
func Minimal(config []byte, extraKeys ...string) ([]byte, error) {
	if _, err := ParseShape(config); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	out := keep(top, extraKeys)
	if raw, ok := top["text_config"]; ok {
		var text map[string]json.RawMessage
		if err := json.Unmarshal(raw, &text); err == nil && text != nil {
			b, err := json.Marshal(keep(text, extraKeys))
			if err != nil {
				return nil, err
			}
			out["text_config"] = b
		}
	}
	return json.Marshal(out)
}

func keep(obj map[string]json.RawMessage, extraKeys []string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, k := range append(append([]string{"architectures", "model_type"}, configKeys...), extraKeys...) {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return out
}
