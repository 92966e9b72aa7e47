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
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// FuzzDerive feeds arbitrary bytes as a config.json (they arrive from users
// and ConfigMaps): every input gives either a pair whose buffers are within
// the planner's limits or an *Error with a reason, a key and a fix.
func FuzzDerive(f *testing.F) {
	for _, s := range []string{llama31_70B, qwen3_32B, llama7B, gemma2B, deepseekV3, qwen35_27B,
		`{}`, `[]`, `{"text_config": {}}`, `{"num_attention_heads": 1e3}`, `{"kv_lora_rank": null}`} {
		f.Add([]byte(s), uint8(8), uint8(4), uint8(16))
	}
	f.Fuzz(func(t *testing.T, config []byte, prefillTP, decodeTP, tokens uint8) {
		o := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: int(tokens),
			Prefill: modelgeom.Role{TP: int(prefillTP), DP: 1}, Decode: modelgeom.Role{TP: int(decodeTP), DP: 1}}
		p, err := modelgeom.Derive(config, o)
		if err != nil {
			var me *modelgeom.Error
			if !errors.As(err, &me) || me.Reason == "" || me.Key == "" || me.Fix == "" {
				t.Fatalf("untyped or incomplete error: %#v", err)
			}
			return
		}
		if len(p.KVBuffers) == 0 {
			t.Fatal("a derived pair without KV buffers")
		}
		for _, g := range append(append([]modelgeom.Group{}, p.KVBuffers...), p.StateBuffers...) {
			if g.Count < 1 || g.Count > modelgeom.MaxLayers {
				t.Fatalf("group %+v: count out of range", g)
			}
			for _, v := range []int64{g.PrefillItemBytes, g.DecodeItemBytes, g.PrefillUnitBytes, g.DecodeUnitBytes} {
				if v < 1 || v > 1<<40 {
					t.Fatalf("group %+v: a size out of range", g)
				}
			}
		}
	})
}
