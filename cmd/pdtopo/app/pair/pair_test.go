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

package pair_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/test/clitest"
)

const (
	llamaConfig    = "../../testdata/models/llama-3.1-70b.json"
	deepseekConfig = "../../testdata/models/deepseek-v3.json"
	llama7BConfig  = "../../testdata/models/llama-7b.json"
	qwen35Config   = "../../testdata/models/qwen3.5-27b.json"
)

// explicitSpec is what `pair --explicit -o json` prints of the spec.
type explicitSpec struct {
	AttentionBackend string `json:"attentionBackend"`
	TokensPerPage    int    `json:"tokensPerPage"`
	KVBuffers        []struct {
		Kind                                                                 string
		Count                                                                int
		DecodeItemBytes, PrefillItemBytes, DecodeUnitBytes, PrefillUnitBytes int64
	} `json:"kvBuffers"`
	StateBuffers []struct {
		Count                                                                int
		DecodeItemBytes, PrefillItemBytes, DecodeUnitBytes, PrefillUnitBytes int64
	} `json:"stateBuffers"`
	Model *json.RawMessage `json:"model"`
}

func pairExplicit(t *testing.T, args ...string) explicitSpec {
	t.Helper()
	code, out, errOut := clitest.Run(t, "", append([]string{"pair", "--explicit", "-o", "json", "--name", "p"}, args...)...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		APIVersion, Kind string
		Spec             explicitSpec
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.APIVersion != "pd.pdtopo.dev/v1alpha1" || doc.Kind != "PDPair" || doc.Spec.Model != nil {
		t.Fatalf("not an explicit PDPair:\n%s", out)
	}
	return doc.Spec
}

type group struct {
	kind                               string
	count                              int
	decItem, preItem, decUnit, preUnit int64
}

func kvGroups(s explicitSpec) []group {
	var out []group
	for _, g := range s.KVBuffers {
		out = append(out, group{g.Kind, g.Count, g.DecodeItemBytes, g.PrefillItemBytes, g.DecodeUnitBytes, g.PrefillUnitBytes})
	}
	for _, g := range s.StateBuffers {
		out = append(out, group{"state", g.Count, g.DecodeItemBytes, g.PrefillItemBytes, g.DecodeUnitBytes, g.PrefillUnitBytes})
	}
	return out
}

// `pdtopo pair --explicit -o json` prints the buffers worked out by hand
// from the engine's pools (pkg/modelgeom's tests have the arithmetic).
func TestPairExplicitBuffers(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		attention string
		want      []group
	}{
		// 8 KV heads of 8192 / 64 = 128 × 2 B: prefill 1 head, decode 2, 16 rows.
		{"GQA", []string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--tokens-per-page", "16", "--kv-cache-dtype", "bfloat16"}, "MHA",
			[]group{{"TargetK", 80, 8192, 4096, 256, 256}, {"TargetV", 80, 8192, 4096, 256, 256}}},
		// MHA, 32 heads of 4096 / 32 = 128 × 2 B: prefill 32 / 2 = 16, decode 8.
		{"MHA without head_dim", []string{"--hf-config", llama7BConfig, "--prefill-tp", "2", "--decode-tp", "4", "--kv-cache-dtype", "float16"}, "MHA",
			[]group{{"TargetK", 32, 2048, 4096, 256, 256}, {"TargetV", 32, 2048, 4096, 256, 256}}},
		// (512 + 64) × 1 B (fp8) on every rank; 61 layers and 1 MTP layer.
		{"MLA with MTP", []string{"--hf-config", deepseekConfig, "--prefill-tp", "16", "--decode-tp", "8", "--kv-cache-dtype", "fp8"}, "MLA",
			[]group{{"TargetK", 61, 576, 576, 1, 1}, {"DraftK", 1, 576, 576, 1, 1}}},
		{"MLA without the draft model", []string{"--hf-config", deepseekConfig, "--prefill-tp", "16", "--decode-tp", "8", "--kv-cache-dtype", "bfloat16", "--draft-layers", "0"}, "MLA",
			[]group{{"TargetK", 61, 1152, 1152, 1, 1}}},
		// TP 16 over 8 KV heads: 1 head per prefill rank (replicated), 4 per decode rank.
		{"TP above KV heads", []string{"--hf-config", llamaConfig, "--prefill-tp", "16", "--decode-tp", "2", "--kv-cache-dtype", "bfloat16"}, "MHA",
			[]group{{"TargetK", 80, 1024, 256, 256, 256}, {"TargetV", 80, 1024, 256, 256, 256}}},
		// 16 attention layers of 4 KV heads × 256 × 2 B (1 per rank at TP 4);
		// 48 linear-attention layers: 10240 / 4 channels × 3 taps × 2 B,
		// 48 / 4 heads × 128 × 128 × 4 B. (Unequal TP sizes are refused for
		// hybrid models: see TestPairRefusals.)
		{"hybrid", []string{"--hf-config", qwen35Config, "--prefill-tp", "4", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16"}, "MHA",
			[]group{{"TargetK", 16, 512, 512, 512, 512}, {"TargetV", 16, 512, 512, 512, 512},
				{"DraftK", 1, 512, 512, 512, 512}, {"DraftV", 1, 512, 512, 512, 512},
				{"state", 48, 15360, 15360, 6, 6}, {"state", 48, 786432, 786432, 65536, 65536}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := pairExplicit(t, c.args...)
			if got := kvGroups(s); !reflect.DeepEqual(got, c.want) || s.AttentionBackend != c.attention {
				t.Errorf("%s buffers\n got %+v\nwant %s %+v", s.AttentionBackend, got, c.attention, c.want)
			}
		})
	}
}

// `pdtopo plan -f` plans a model-aware PDPair exactly as the explicit one
// it derives, and the model form carries only the keys the derivation reads.
func TestPairModelFormPlansAsTheExplicitForm(t *testing.T) {
	for _, args := range [][]string{
		{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--tokens-per-page", "16", "--kv-cache-dtype", "bfloat16"},
		{"--hf-config", deepseekConfig, "--prefill-tp", "8", "--decode-tp", "16", "--decode-dp", "8", "--kv-cache-dtype", "bfloat16", "--mla-l15-cache"},
		{"--hf-config", qwen35Config, "--prefill-tp", "4", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16"},
	} {
		base := append([]string{"pair", "--name", "p"}, args...)
		code, model, errOut := clitest.Run(t, "", base...)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.Contains(model, "vocab_size") || !strings.Contains(model, "hfConfig:") || !strings.Contains(model, "# The operator derives these buffers") {
			t.Errorf("the model form:\n%s", model)
		}
		pair, err := manifest.ReadPDPair(strings.NewReader(model), "")
		if err != nil || pair.Spec.Model == nil || pair.Spec.KVBuffers != nil {
			t.Fatalf("the model form does not read as a model-aware PDPair (%v):\n%s", err, model)
		}
		code, explicit, _ := clitest.Run(t, "", append(base, "--explicit")...)
		if code != cli.ExitOK {
			t.Fatalf("--explicit: exit %d", code)
		}
		_, fromModel, errM := clitest.Run(t, model, "plan", "-f", "-", "-o", "json")
		_, fromExplicit, errE := clitest.Run(t, explicit, "plan", "-f", "-", "-o", "json")
		if fromModel == "" || fromModel != fromExplicit {
			t.Errorf("%v: the model form plans to\n%.600s (%s)\nthe explicit form to\n%.600s (%s)", args, fromModel, errM, fromExplicit, errE)
		}
		// The table of a model-aware pair shows what was derived.
		if _, table, _ := clitest.Run(t, model, "plan", "-f", "-"); !strings.Contains(table, "MODEL ") || !strings.Contains(table, "DERIVED") {
			t.Errorf("the plan table does not show the derived buffers:\n%.800s", table)
		}
	}
}

// Bad input is refused with the key or flag and the numbers; a layout the
// engine cannot run is a verdict (exit 3), and nothing reaches the planner.
func TestPairRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, make([]byte, 50<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	good := []string{"--prefill-tp", "8", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16", "--name", "p"}
	for _, c := range []struct {
		name string
		args []string
		exit int
		says []string
	}{
		{"not JSON", append([]string{"--hf-config", write("bad.json", "{heads: 8")}, good...), cli.ExitUsage, []string{"config.json", "not a JSON object"}},
		{"50 MB", append([]string{"--hf-config", huge}, good...), cli.ExitUsage, []string{"52428", "at most 1048576"}},
		{"zero heads", append([]string{"--hf-config", write("zero.json", `{"num_attention_heads": 0, "num_hidden_layers": 2, "head_dim": 64}`)}, good...),
			cli.ExitUsage, []string{"num_attention_heads", "0 is out of range"}},
		{"KV heads not dividing", append([]string{"--hf-config", write("kv.json", `{"num_attention_heads": 64, "num_key_value_heads": 12, "num_hidden_layers": 2, "head_dim": 64}`)}, good...),
			cli.ExitUsage, []string{"num_key_value_heads", "12 KV heads do not divide num_attention_heads 64"}},
		{"unknown dtype", []string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--kv-cache-dtype", "int4", "--name", "p"},
			cli.ExitUsage, []string{"--kv-cache-dtype", `"int4"`}},
		{"no config", good, cli.ExitUsage, []string{"--hf-config is required"}},
		{"bad name", []string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16", "--name", "Not_A_Name"},
			cli.ExitUsage, []string{"--name"}},
		{"dp not dividing tp", []string{"--hf-config", llamaConfig, "--prefill-tp", "8", "--prefill-dp", "3", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16", "--name", "p"},
			cli.ExitUsage, []string{"--prefill-dp 3 must divide --prefill-tp 8"}},
		// A hybrid model's convolution state interleaves its q, k and v
		// channels per rank: TP 4 and TP 2 ranks cannot exchange it.
		{"hybrid with unequal TP", []string{"--hf-config", qwen35Config, "--prefill-tp", "4", "--decode-tp", "2", "--kv-cache-dtype", "bfloat16", "--name", "p"},
			cli.ExitIncompatible, []string{"UnsupportedHeterogeneousTP", "convolution state of 48 linear-attention layers", "10240 channels",
				"Fix: give both roles the same TP per DP group: decode TP 4 per DP group (keeping prefill TP 4), or prefill TP 2 per DP group (keeping decode TP 2)"}},
		// 64 attention heads do not split over 3 ranks.
		{"TP the engine refuses", []string{"--hf-config", llamaConfig, "--prefill-tp", "3", "--decode-tp", "4", "--kv-cache-dtype", "bfloat16", "--name", "p"},
			cli.ExitIncompatible, []string{"TPDoesNotSplitHeads", "prefill TP 3 per DP group does not divide the 64 attention heads", "Fix: prefill TP 1, 2, 4, 8, 16, 32 or 64"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := clitest.Run(t, "", append([]string{"pair"}, c.args...)...)
			if code != c.exit {
				t.Fatalf("exit %d, want %d: %s%s", code, c.exit, out, errOut)
			}
			if out != "" {
				t.Errorf("a refused pair printed %q", out)
			}
			for _, s := range c.says {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q does not say %q", errOut, s)
				}
			}
		})
	}
}

// A layout the planner refuses is printed all the same, with its verdict
// and the model's fix on standard error and in the YAML's comment.
func TestPairIncompatibleIsPrintedWithTheFix(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "pair", "--hf-config", llamaConfig, "--prefill-tp", "2", "--decode-tp", "16", "--kv-cache-dtype", "bfloat16", "--name", "p")
	fix := "decode TP 1, 2, 4 or 8 (keeping prefill TP 2), or prefill TP 8, 16, 32 or 64 (keeping decode TP 16) would work with these 8 KV heads"
	if code != cli.ExitIncompatible || !strings.Contains(errOut, "UnsupportedHeterogeneousTP") || !strings.Contains(errOut, fix) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "# INCOMPATIBLE UnsupportedHeterogeneousTP") || !strings.Contains(out, "kind: PDPair") {
		t.Errorf("the pair is not printed with its verdict:\n%s", out)
	}
}
