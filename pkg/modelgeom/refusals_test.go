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
	"errors"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// Configs the derivation cannot use are refused with the key they concern
// and a fix; nothing is guessed and nothing panics.
func TestDeriveRefusals(t *testing.T) {
	cases := []struct {
		name, config string
		o            modelgeom.Options
		reason       modelgeom.Reason
		key          string
		// words the message must hold (the numbers, the fix)
		says []string
	}{
		{"not JSON", `{"num_attention_heads": 8,`, opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "config.json", []string{"not a JSON object"}},
		{"a list", `[1, 2]`, opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "config.json", []string{"not a JSON object"}},
		{"null", `null`, opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "config.json", []string{"not a JSON object"}},
		{"two objects", `{"a": 1} {"b": 2}`, opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "config.json", []string{"after its JSON object"}},
		{"zero attention heads", `{"num_attention_heads": 0, "num_hidden_layers": 2, "hidden_size": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_attention_heads", []string{"0 is out of range", "from 1"}},
		{"zero KV heads", `{"num_attention_heads": 8, "num_key_value_heads": 0, "num_hidden_layers": 2, "hidden_size": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_key_value_heads", []string{"0 is out of range"}},
		{"KV heads not dividing", `{"num_attention_heads": 64, "num_key_value_heads": 12, "num_hidden_layers": 2, "hidden_size": 8192}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_key_value_heads", []string{"12 KV heads do not divide num_attention_heads 64"}},
		{"no attention heads", `{"num_hidden_layers": 2, "hidden_size": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_attention_heads", []string{"missing", "add num_attention_heads"}},
		{"no layers", `{"num_attention_heads": 8, "hidden_size": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_hidden_layers", []string{"missing"}},
		{"no head_dim nor hidden_size", `{"num_attention_heads": 8, "num_hidden_layers": 2}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "hidden_size", []string{"head_dim is absent"}},
		{"head_dim a string", `{"num_attention_heads": 8, "num_hidden_layers": 2, "head_dim": "128"}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "head_dim", []string{`the string "128" is not a number`}},
		{"head_dim a fraction", `{"num_attention_heads": 8, "num_hidden_layers": 2, "head_dim": 127.5}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "head_dim", []string{"127.5 is not an integer"}},
		{"too many layers", `{"num_attention_heads": 8, "num_hidden_layers": 5000, "head_dim": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "num_hidden_layers", []string{"5000 is out of range", "4096"}},
		{"text_config not an object", `{"text_config": [1]}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "text_config", []string{"a list"}},
		{"nested key named with its path", `{"text_config": {"num_attention_heads": 8, "num_hidden_layers": 2, "head_dim": -1}}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "text_config.head_dim", []string{"-1 is out of range"}},
		{"MLA without rope dim", `{"architectures": ["DeepseekV3ForCausalLM"], "num_attention_heads": 128, "num_hidden_layers": 61, "kv_lora_rank": 512}`,
			opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "qk_rope_head_dim", []string{"missing"}},
		{"DSA is not modelled", `{"architectures": ["GlmMoeDsaForCausalLM"], "num_attention_heads": 64}`, opts("bfloat16", 1, 1, 1),
			modelgeom.ReasonInvalidModelConfig, "architectures", []string{"GlmMoeDsaForCausalLM", "kvBuffers"}},
		{"hybrid without interval", `{"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": {"num_attention_heads": 24, "num_hidden_layers": 64}}`,
			opts("bfloat16", 1, 1, 1), modelgeom.ReasonInvalidModelConfig, "text_config.full_attention_interval", []string{"missing"}},
		{"unknown dtype", llama31_70B, opts("int4", 1, 8, 4), modelgeom.ReasonUnsupportedKVCacheDtype, "kvCacheDtype", []string{`"int4"`, "bfloat16, float16, float8_e4m3fn, float8_e5m2"}},
		{"unknown role dtype", llama31_70B, func() modelgeom.Options { o := opts("bfloat16", 1, 8, 4); o.Decode.KVCacheDtype = "fp4"; return o }(),
			modelgeom.ReasonUnsupportedKVCacheDtype, "decode.kvCacheDtype", []string{`"fp4"`}},
		// 24 attention heads split over 3, but 8 KV heads do not.
		{"TP not splitting KV heads", `{"num_attention_heads": 24, "num_key_value_heads": 8, "num_hidden_layers": 2, "head_dim": 128}`,
			opts("bfloat16", 1, 3, 1), modelgeom.ReasonTPDoesNotSplitHeads, "num_key_value_heads",
			[]string{"prefill TP 3 per DP group does not divide the 8 KV heads", "prefill TP 1, 2, 4, 8 or 24 per DP group would work"}},
		// 16 ranks over 8 KV heads replicate them, but 24 attention heads do not split over 16.
		{"TP not splitting attention heads", `{"num_attention_heads": 24, "num_key_value_heads": 8, "num_hidden_layers": 2, "head_dim": 128}`,
			opts("bfloat16", 1, 1, 16), modelgeom.ReasonTPDoesNotSplitHeads, "num_attention_heads",
			[]string{"decode TP 16 per DP group does not divide the 24 attention heads"}},
		// 12 splits the 24 attention heads, replicates the 4 KV heads thrice
		// and splits the 48 linear value heads, but not the 128 × 16 × 2 +
		// 128 × 48 = 10240 convolution channels (10240 = 2^11 × 5); of the
		// divisors of 24, 1, 2, 4 and 8 split everything (3 and 6 neither
		// divide 4 KV heads nor are multiples of them; 12 and 24 not 10240).
		{"hybrid TP", qwen35_27B, opts("bfloat16", 1, 1, 12), modelgeom.ReasonTPDoesNotSplitHeads, "linear_key_head_dim",
			[]string{"decode TP 12", "10240 convolution channels", "decode TP 1, 2, 4 or 8 per DP group"}},
		{"zero tokens per page", llama31_70B, opts("bfloat16", 0, 8, 4), modelgeom.ReasonInvalidLayout, "tokensPerPage", []string{"0 is out of range"}},
		{"DP not dividing TP", llama31_70B, func() modelgeom.Options { o := opts("bfloat16", 1, 8, 4); o.Decode.DP = 3; return o }(),
			modelgeom.ReasonInvalidLayout, "decode.dataParallelSize", []string{"3 does not divide tensorParallelSize 4", "1, 2 or 4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := modelgeom.Derive([]byte(c.config), c.o)
			var me *modelgeom.Error
			if !errors.As(err, &me) {
				t.Fatalf("want a *modelgeom.Error, got %v (pair %+v)", err, p)
			}
			if me.Reason != c.reason || me.Key != c.key {
				t.Errorf("reason %s key %q, want %s key %q: %s", me.Reason, me.Key, c.reason, c.key, me.Message())
			}
			msg := me.Message()
			if !strings.HasPrefix(msg, c.key+": ") || me.Fix == "" || !strings.HasSuffix(msg, "Fix: "+me.Fix) {
				t.Errorf("the message must start with the key and end with the fix: %s", msg)
			}
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
		})
	}
}

// A 50 MB config is refused by its size, before a byte of it is parsed (its
// content, zero bytes after an opening brace, would be a syntax error).
func TestHugeConfigRefusedBeforeParsing(t *testing.T) {
	huge := make([]byte, 50<<20)
	copy(huge, `{"num_attention_heads": 8, "pad": "`)
	_, err := modelgeom.ParseConfig(huge)
	var me *modelgeom.Error
	if !errors.As(err, &me) || me.Reason != modelgeom.ReasonInvalidModelConfig || me.Key != "config.json" {
		t.Fatalf("want InvalidModelConfig for config.json, got %v", err)
	}
	if want := "the config is 52428800 bytes; at most 1048576 are read"; !strings.Contains(me.Message(), want) {
		t.Errorf("message %q does not say %q", me.Message(), want)
	}
	// One byte under the limit is parsed (and refused for what it holds).
	_, err = modelgeom.ParseConfig(huge[:modelgeom.MaxConfigBytes])
	if !errors.As(err, &me) || !strings.Contains(me.Message(), "not a JSON object") {
		t.Errorf("a config of exactly MaxConfigBytes must be parsed, got %v", err)
	}
}
