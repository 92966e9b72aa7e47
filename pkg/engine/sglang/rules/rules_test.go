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

func role(tp, dp, pp, page int) Role { return Role{TP: tp, DP: dp, PP: pp, PageSize: page} }

// Each rule refuses with its reason, names the field, and its fix names
// the flag and the nearest values that work.
func TestJudgeRefusals(t *testing.T) {
	qwen15 := models["Qwen/Qwen2.5-1.5B-Instruct"]
	gptOSS := models["openai/gpt-oss-120b"]
	for _, c := range []struct {
		name     string
		pair     Pair
		reason   Reason
		field    string
		fix      string
		stricter bool
	}{
		{"qwen2.5 page 16 → 64", Pair{Model: qwen15, Prefill: role(2, 1, 1, 16), Decode: role(2, 1, 1, 64)},
			ReasonPageSizeMismatch, "decode.pageSize", "set decode --page-size to 16 (prefill's)", false},
		{"qwen2.5 auto → bfloat16", Pair{Model: qwen15, Prefill: Role{TP: 2, PageSize: 16, KVCacheDtype: "auto"}, Decode: Role{TP: 2, PageSize: 16, KVCacheDtype: "bfloat16"}},
			ReasonKVCacheDtypeMismatch, "decode.kvCacheDtype", "decode --kv-cache-dtype auto (prefill's)", false},
		{"qwen2.5 PP 1 → PP 2", Pair{Model: qwen15, Prefill: role(2, 1, 1, 16), Decode: role(2, 1, 2, 16)},
			ReasonPPSizeMismatch, "decode.pipelineParallelSize", "set decode --pp-size to 1", false},
		{"qwen2.5 PP 2 → PP 4", Pair{Model: qwen15, Prefill: role(2, 1, 2, 16), Decode: role(2, 1, 4, 16)},
			ReasonPPSizeMismatch, "decode.pipelineParallelSize", "set decode --pp-size to 1 or 2 (prefill's)", false},
		{"qwen2.5 TP 4 → TP 6 (a route 404)", Pair{Model: qwen15, Prefill: role(4, 1, 1, 16), Decode: role(6, 1, 1, 16)},
			ReasonTPRatioNotDivisible, "decode.tensorParallelSize", "set decode --tp-size to 4 or 2 (keeping prefill --tp-size 4", false},
		{"qwen2.5 TP 6 → TP 4 (SGLang accepts, wrong heads)", Pair{Model: qwen15, Prefill: role(6, 1, 1, 16), Decode: role(4, 1, 1, 16)},
			ReasonTPRatioNotDivisible, "decode.tensorParallelSize", "set decode --tp-size to 2 or 6 (keeping prefill --tp-size 6", true},
		{"gpt-oss TP 1 → TP 4 (llm-d#2433)", Pair{Model: gptOSS, Prefill: role(1, 1, 1, 16), Decode: role(4, 1, 1, 16)},
			ReasonHybridStateTPMismatch, "decode.tensorParallelSize", "set decode --tp-size to 1", false},
		{"gpt-oss TP 8 DP 2 → TP 4, backend tcp", Pair{Model: gptOSS, Prefill: role(8, 2, 1, 16), Decode: role(4, 1, 1, 16), Backend: "tcp"},
			ReasonInvalidPair, "kvConnector", "mooncake or nixl", false},
		{"qwen2.5 TP 4 DP 3", Pair{Model: qwen15, Prefill: role(4, 3, 1, 16), Decode: role(4, 1, 1, 16)},
			ReasonInvalidPair, "prefill.dataParallelSize", "a DP-attention size dividing the TP size", false},
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

// Compatible pairs map as _resolve_rank_mapping does, numbered as the
// package says: global decode TP rank, prefill attention-TP rank.
func TestJudgeMappings(t *testing.T) {
	v3 := models["deepseek-ai/DeepSeek-V3"]
	llama := models["meta-llama/Meta-Llama-3-8B-Instruct"]
	for _, c := range []struct {
		name  string
		pair  Pair
		ranks [][]Target
	}{
		{"llama TP 2 → TP 4: decode ranks 0, 1 read prefill 0", Pair{Model: llama, Prefill: role(2, 1, 1, 16), Decode: role(4, 1, 1, 16)},
			[][]Target{{{0, 0, false}}, {{0, 0, false}}, {{1, 0, false}}, {{1, 0, false}}}},
		{"llama TP 4 → TP 2: two real targets", Pair{Model: llama, Prefill: role(4, 1, 1, 16), Decode: role(2, 1, 1, 16)},
			[][]Target{{{0, 0, false}, {1, 0, false}}, {{2, 0, false}, {3, 0, false}}}},
		{"deepseek TP 16 DP 2 → TP 4 DP 2: attention TP 8 → 2, dummies", Pair{Model: v3, Prefill: role(16, 2, 1, 64), Decode: role(4, 2, 1, 64)},
			[][]Target{
				{{0, 0, false}, {1, 0, true}, {2, 0, true}, {3, 0, true}},
				{{4, 0, false}, {5, 0, true}, {6, 0, true}, {7, 0, true}},
				{{0, 0, false}, {1, 0, true}, {2, 0, true}, {3, 0, true}},
				{{4, 0, false}, {5, 0, true}, {6, 0, true}, {7, 0, true}},
			}},
		{"llama TP 2 PP 2 → TP 2 PP 1: every stage, highest first", Pair{Model: llama, Prefill: role(2, 1, 2, 16), Decode: role(2, 1, 1, 16)},
			[][]Target{{{0, 1, false}, {0, 0, false}}, {{1, 1, false}, {1, 0, false}}}},
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
