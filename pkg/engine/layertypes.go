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

package engine

import (
	"encoding/json"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// The layer kinds LayerTypes counts, in Hugging Face's layer_types
// vocabulary.
const (
	LayerFullAttention    = "full_attention"
	LayerSlidingAttention = "sliding_attention"
	// LayerChunkedAttention: Llama 4's chunked local attention.
	LayerChunkedAttention = "chunked_attention"
	// LayerLinearAttention: every layer that keeps a recurrent state
	// instead of (or beside) a KV cache: Gated DeltaNet, Mamba, short
	// convolutions. The engines cache them all as Mamba-like state.
	LayerLinearAttention = "linear_attention"
)

// Names other configs give the same kinds (Granite 4.0-H's "mamba" and
// "attention", LFM2's "conv", …).
var layerTypeSynonyms = map[string]string{
	"attention": LayerFullAttention, "global_attention": LayerFullAttention,
	"sliding_window": LayerSlidingAttention, "local_attention": LayerSlidingAttention,
	"mamba": LayerLinearAttention, "mamba2": LayerLinearAttention, "conv": LayerLinearAttention,
	"linear": LayerLinearAttention, "gated_deltanet": LayerLinearAttention,
}

// LayerTypes counts the model's layers by kind. The config's layer_types
// list when it has one (synonyms folded into the four kinds above);
// otherwise what the config class derives it from, as Hugging Face's
// classes do when layer_types is absent from config.json:
//   - full_attention_interval k (Qwen3-Next): layer i is full attention
//     when (i+1) % k == 0, else linear attention;
//   - attn_layer_period p, attn_layer_offset o (Jamba): layer i is
//     attention when i % p == o, else Mamba;
//   - hybrid_override_pattern (Nemotron-H): "M" Mamba, "*" attention ("-"
//     and "E" are MLP and MoE layers, which cache nothing);
//   - hybrid_layer_pattern (MiMo-V2): 1 sliding window, 0 full;
//   - attention_chunk_size (Llama 4): chunked where no_rope_layers is 1,
//     by default every layer but each fourth;
//   - model_type gemma2: every other layer sliding, from the first;
//     gemma3 / gemma3_text: sliding except each sliding_window_pattern-th
//     (default 6).
//
// A model none of these name counts nothing (one kind of layer throughout).
func (c *HFConfig) LayerTypes() map[string]int {
	out := map[string]int{}
	if list, ok := c.text["layer_types"].([]any); ok && len(list) > 0 {
		for _, t := range list {
			if s, ok := t.(string); ok {
				if canon, ok := layerTypeSynonyms[s]; ok {
					s = canon
				}
				out[s]++
			}
		}
		return out
	}
	n := min(c.Int("num_hidden_layers"), modelgeom.MaxLayers)
	if n == 0 {
		return out
	}
	switch {
	case c.Int("full_attention_interval") > 0:
		full := n / c.Int("full_attention_interval")
		out[LayerFullAttention], out[LayerLinearAttention] = full, n-full
	case c.Int("attn_layer_period") > 0:
		full := countPeriodic(n, c.Int("attn_layer_period"), c.int0("attn_layer_offset"))
		out[LayerFullAttention], out[LayerLinearAttention] = full, n-full
	case c.str("hybrid_override_pattern") != "":
		for _, r := range c.str("hybrid_override_pattern") {
			switch r {
			case 'M':
				out[LayerLinearAttention]++
			case '*':
				out[LayerFullAttention]++
			}
		}
	case c.Has("hybrid_layer_pattern"):
		list, _ := c.text["hybrid_layer_pattern"].([]any)
		for _, v := range list {
			if num, ok := v.(json.Number); ok && num.String() == "1" {
				out[LayerSlidingAttention]++
			} else {
				out[LayerFullAttention]++
			}
		}
	case c.Has("attention_chunk_size"):
		chunked := n - n/4
		if list, ok := c.text["no_rope_layers"].([]any); ok && len(list) > 0 {
			chunked = 0
			for _, v := range list {
				if num, ok := v.(json.Number); ok && num.String() == "1" {
					chunked++
				}
			}
		}
		out[LayerChunkedAttention], out[LayerFullAttention] = chunked, n-chunked
	case c.modelType() == "gemma2":
		out[LayerSlidingAttention] = (n + 1) / 2
		out[LayerFullAttention] = n / 2
	case c.modelType() == "gemma3" || c.modelType() == "gemma3_text":
		pattern := c.Int("sliding_window_pattern")
		if pattern == 0 {
			pattern = 6 // Gemma3TextConfig's default
		}
		out[LayerFullAttention] = n / pattern
		out[LayerSlidingAttention] = n - n/pattern
	}
	return out
}

// countPeriodic counts i in [0, n) with i % period == offset.
func countPeriodic(n, period, offset int) int {
	if offset >= period || offset >= n {
		return 0
	}
	return (n-1-offset)/period + 1
}

// Architectures is the config's architectures list (text_config's when the
// top level has none).
func (c *HFConfig) Architectures() []string {
	for _, obj := range []map[string]any{c.top, c.text} {
		list, _ := obj["architectures"].([]any)
		var out []string
		for _, a := range list {
			if s, ok := a.(string); ok {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// Bool is the text config's boolean key, false when absent.
func (c *HFConfig) Bool(key string) bool {
	b, _ := c.text[key].(bool)
	return b
}

func (c *HFConfig) str(key string) string {
	s, _ := c.text[key].(string)
	return s
}

// int0 is like Int but reads 0 as 0 (Int reads only positive values).
func (c *HFConfig) int0(key string) int {
	if n, ok := c.text[key].(json.Number); ok && n.String() == "0" {
		return 0
	}
	return c.Int(key)
}

// modelType is the text config's model_type, else the top level's.
func (c *HFConfig) modelType() string {
	if s := c.str("model_type"); s != "" {
		return s
	}
	s, _ := c.top["model_type"].(string)
	return s
}
