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

package rules

import (
	"strings"
	"testing"
)

// meta-llama/Llama-4-Scout-17B-16E-Instruct (40 heads, 8 KV heads) at TP
// 16 → 16, block 64 → 32, HND → NHD: two rules fail, and no change of one
// role helps while the other stays at a TP vLLM cannot load the model at
// (40 % 16 ≠ 0). The fix says so instead of "no layout … works".
func TestFixNamesTheTPTheModelDoesNotLoadAt(t *testing.T) {
	scout := Model{NumHiddenLayers: 48, NumAttentionHeads: 40, NumKVHeads: 8, HeadDim: 128}
	v := Judge(Pair{Model: scout, KVConnector: Connector,
		Prefill: Role{TP: 16, BlockSize: 64, KVCacheLayout: LayoutHND},
		Decode:  Role{TP: 16, BlockSize: 32, KVCacheLayout: LayoutNHD}})
	if v.Compatible() || v.Refusal.Reason != ReasonBlockSizeNotMultiple {
		t.Fatalf("verdict %+v, want %s", v.Refusal, ReasonBlockSizeNotMultiple)
	}
	if !strings.Contains(v.Refusal.Fix, "does not load the model at prefill --tensor-parallel-size 16 (40 attention heads, 8 KV heads)") {
		t.Fatalf("fix %q names no TP the model does not load at", v.Refusal.Fix)
	}
}
