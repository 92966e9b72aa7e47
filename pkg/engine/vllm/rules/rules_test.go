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
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var (
	llama8B   = Model{NumHiddenLayers: 32, NumAttentionHeads: 32, NumKVHeads: 8, HeadDim: 128}
	deepseek  = Model{NumHiddenLayers: 61, NumAttentionHeads: 128, NumKVHeads: 128, HeadDim: 128, UseMLA: true, KVLoraRank: 512, QKRopeHeadDim: 64}
	qwen3Next = Model{NumHiddenLayers: 48, NumAttentionHeads: 16, NumKVHeads: 2, HeadDim: 256, HasMamba: true, FullAttentionInterval: 4}
)

func role(tp, block int, layout Layout, dtype string) Role {
	return Role{TP: tp, BlockSize: block, KVCacheLayout: layout, KVCacheDtype: dtype}
}

// Each rule refuses with its reason, names the field, and its fix names
// the flag and the nearest values that work.
func TestJudgeRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		pair     Pair
		reason   Reason
		field    string
		fix      string
		stricter bool
	}{
		{"llama TP 8 → TP 6", Pair{Model: llama8B, Prefill: role(8, 16, "", ""), Decode: role(6, 16, "", "")},
			ReasonTPNotDivisible, "decode.tensorParallelSize", "set decode --tensor-parallel-size to 4 or 8 (keeping prefill TP 8)", false},
		{"llama auto → bfloat16", Pair{Model: llama8B, Prefill: role(2, 16, "", "auto"), Decode: role(2, 16, "", "bfloat16")},
			ReasonKVCacheDtypeMismatch, "decode.kvCacheDtype", "decode --kv-cache-dtype auto (prefill's)", false},
		{"llama vLLM 0.10.2 → 0.11.0", Pair{Model: llama8B, Prefill: Role{TP: 2, BlockSize: 16, Version: "0.10.2"}, Decode: Role{TP: 2, BlockSize: 16, Version: "0.11.0"}},
			ReasonEngineVersionMismatch, "decode.engineVersion", "decode on 0.10.2 (prefill's), or prefill on 0.11.0 too", false},
		{"llama vLLM 0.11.0 → 0.11.1 at TP 8 → 6: the TPs are refused first, as the engine does, and both fixes are named", Pair{Model: llama8B, Prefill: Role{TP: 8, BlockSize: 16, Version: "0.11.0"}, Decode: Role{TP: 6, BlockSize: 16, Version: "0.11.1"}},
			ReasonTPNotDivisible, "decode.tensorParallelSize", "(keeping decode TP 6); and run both roles on one vLLM build: decode on 0.11.0", false},
		{"llama vLLM versions and dtypes both differ: the version is named", Pair{Model: llama8B, Prefill: Role{TP: 2, BlockSize: 16, KVCacheDtype: "fp8", Version: "0.11.0"}, Decode: Role{TP: 2, BlockSize: 16, Version: "0.11.1.dev5+g1a2b3c4"}},
			ReasonEngineVersionMismatch, "decode.engineVersion", "decode on 0.11.0 (prefill's)", false},
		{"llama block 32 → 16", Pair{Model: llama8B, Prefill: role(2, 32, "", ""), Decode: role(2, 16, "", "")},
			ReasonBlockSizeNotMultiple, "decode.blockSize", "set decode --block-size to 32 or 64 (a multiple of prefill's 32); or set prefill --block-size to 16 or 8", false},
		{"llama TP 16 → TP 4 (8 KV heads)", Pair{Model: llama8B, Prefill: role(16, 16, "", ""), Decode: role(4, 16, "", "")},
			ReasonReplicatedPrefillKV, "prefill.tensorParallelSize", "set prefill --tensor-parallel-size to 8 or 4 (keeping decode TP 4)", false},
		{"llama HND → NHD", Pair{Model: llama8B, Prefill: role(2, 16, LayoutHND, ""), Decode: role(2, 16, LayoutNHD, "")},
			ReasonKVCacheLayoutMismatch, "decode.kvCacheLayout", "set VLLM_KV_CACHE_LAYOUT=HND on both roles", false},
		{"llama TP 2 → TP 4 NHD", Pair{Model: llama8B, Prefill: role(2, 16, LayoutNHD, ""), Decode: role(4, 16, LayoutNHD, "")},
			ReasonLayoutNotBlockContiguous, "decode.kvCacheLayout", "set VLLM_KV_CACHE_LAYOUT=HND on both roles", false},
		{"llama TP 4 → TP 2 block 16 → 32", Pair{Model: llama8B, Prefill: role(4, 16, "", ""), Decode: role(2, 32, "", "")},
			ReasonBlockSizeNotEqual, "decode.blockSize", "set decode --block-size to 16 (prefill's 16: equal block sizes)", false},
		{"qwen3-next TP 2 → TP 1 block 16 → 32", Pair{Model: qwen3Next, Prefill: role(2, 16, "", ""), Decode: role(1, 32, "", "")},
			ReasonHeadSplitWithHeteroBlocks, "decode.blockSize", "set decode --block-size to 16", false},
		{"qwen3-next TP 4 → TP 1 NHD (vLLM accepts)", Pair{Model: qwen3Next, Prefill: role(4, 16, LayoutNHD, ""), Decode: role(1, 16, LayoutNHD, "")},
			ReasonNHDMultiSourceRead, "decode.kvCacheLayout", "set VLLM_KV_CACHE_LAYOUT=HND on both roles", true},
		{"llama TP 16 → TP 2 block 64 → 16: two rules at once, two settings to change", Pair{Model: llama8B, Prefill: role(16, 64, "", ""), Decode: role(2, 16, "", "")},
			ReasonBlockSizeNotMultiple, "decode.blockSize", "run decode at --tensor-parallel-size 16, --block-size 64, VLLM_KV_CACHE_LAYOUT=HND, --kv-cache-dtype auto; or run prefill at --tensor-parallel-size 8, --block-size 16", false},
		{"llama TP 0", Pair{Model: llama8B, Prefill: role(0, 16, "", ""), Decode: role(1, 16, "", "")},
			ReasonInvalidPair, "tensorParallelSize", "at least 1", false},
		{"llama LMCacheConnector", Pair{Model: llama8B, Prefill: role(1, 16, "", ""), Decode: role(1, 16, "", ""), KVConnector: "LMCacheConnectorV1"},
			ReasonUnsupportedConnector, "kvConnector", "use kv_connector NixlConnector", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.pair)
			if v.Compatible() {
				t.Fatalf("accepted, want %s", c.reason)
			}
			r := v.Refusal
			if r.Reason != c.reason || r.Field != c.field || r.StricterThanEngine != c.stricter {
				t.Errorf("= %s on %s (stricter %v), want %s on %s (stricter %v)", r.Reason, r.Field, r.StricterThanEngine, c.reason, c.field, c.stricter)
			}
			if !strings.Contains(r.Fix, c.fix) || !strings.HasSuffix(r.Message, ". Fix: "+r.Fix) {
				t.Errorf("fix %q (message %q), want it to say %q and end the message", r.Fix, r.Message, c.fix)
			}
			if c.stricter != strings.Contains(r.Message, "stricter than the engine") {
				t.Errorf("message %q: says stricter = %v, want %v", r.Message, !c.stricter, c.stricter)
			}
		})
	}
}

// Versions are compared only when both roles give one; equal versions,
// or one role's unknown, judge the pair as without them.
func TestJudgeVersions(t *testing.T) {
	for _, c := range []struct {
		prefill, decode string
		accepted        bool
	}{
		{"", "", true}, {"0.11.0", "", true}, {"", "0.11.0", true}, {"0.11.0", "0.11.0", true},
		{"0.11.0", "0.11.1", false}, {"0.11.0", "0.11.0+cu128", false},
	} {
		v := Judge(Pair{Model: llama8B, Prefill: Role{TP: 4, BlockSize: 16, Version: c.prefill}, Decode: Role{TP: 2, BlockSize: 16, Version: c.decode}})
		if v.Compatible() != c.accepted {
			t.Errorf("prefill %q, decode %q: accepted %v, want %v (%v)", c.prefill, c.decode, v.Compatible(), c.accepted, v.Refusal)
		}
		if !c.accepted && !strings.Contains(v.Refusal.Message, "prefill runs vLLM "+c.prefill+", decode vLLM "+c.decode) {
			t.Errorf("message %q does not name both versions", v.Refusal.Message)
		}
	}
}

// Every fix that proposes values proposes ones Judge accepts: the fix's
// first decode TP for TP refusals.
func TestTPFixesAreAccepted(t *testing.T) {
	p := Pair{Model: llama8B, Prefill: role(8, 16, "", ""), Decode: role(6, 16, "", "")}
	for _, tp := range nearest(p, p.Decode.TP, TPSizes, setDecodeTP, func(c int) bool { return loads(p.Model, c) }) {
		if v := Judge(setDecodeTP(p, tp)); !v.Compatible() {
			t.Errorf("decode TP %d, proposed by the fix, is refused: %v", tp, v.Refusal)
		}
	}
}

// Compatible pairs map as compute_tp_mapping does.
func TestJudgeMappings(t *testing.T) {
	for _, c := range []struct {
		name  string
		pair  Pair
		ranks [][]Target
	}{
		{"llama TP 2 → TP 4: two decode ranks per prefill rank", Pair{Model: llama8B, Prefill: role(2, 16, "", ""), Decode: role(4, 16, "", "")},
			[][]Target{{{0, false}}, {{0, false}}, {{1, false}}, {{1, false}}}},
		{"llama TP 4 → TP 2: two prefill ranks per decode rank", Pair{Model: llama8B, Prefill: role(4, 16, "", ""), Decode: role(2, 16, "", "")},
			[][]Target{{{0, false}, {1, false}}, {{2, false}, {3, false}}}},
		{"deepseek TP 4 → TP 2: MLA reads one replica, notifies the other", Pair{Model: deepseek, Prefill: role(4, 16, "", ""), Decode: role(2, 64, "", "")},
			[][]Target{{{0, false}, {1, true}}, {{2, false}, {3, true}}}},
		{"qwen3-next TP 4 → TP 1: attention from 0 and 2, state from all", Pair{Model: qwen3Next, Prefill: role(4, 16, "", ""), Decode: role(1, 16, "", "")},
			[][]Target{{{0, false}, {1, false}, {2, false}, {3, false}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.pair)
			if !v.Compatible() {
				t.Fatalf("refused: %v", v.Refusal)
			}
			for d, want := range c.ranks {
				if !slices.Equal(v.DecodeRanks[d].Targets, want) {
					t.Errorf("decode rank %d: %v, want %v", d, v.DecodeRanks[d].Targets, want)
				}
			}
		})
	}
	v := Judge(Pair{Model: qwen3Next, Prefill: role(4, 16, "", ""), Decode: role(1, 16, "", "")})
	if got := v.DecodeRanks[0].AttentionFrom; !slices.Equal(got, []int{0, 2}) {
		t.Errorf("qwen3-next TP 4 → TP 1 reads attention from %v, want [0 2] (one rank per KV head)", got)
	}
}

// Reasons() lists every Reason constant of the package's source, once.
func TestReasonsListsEveryReasonConstant(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	declared := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, isIdent := vs.Type.(*ast.Ident); isIdent && id.Name == "Reason" {
				for i, name := range vs.Names {
					declared++
					if !slices.Contains(Reasons(), Reason(strings.Trim(vs.Values[i].(*ast.BasicLit).Value, `"`))) {
						t.Errorf("%s is not in Reasons()", name.Name)
					}
				}
			}
			return true
		})
	}
	if declared != len(Reasons()) {
		t.Errorf("%d Reason constants, Reasons() lists %d", declared, len(Reasons()))
	}
}
