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

package modelplan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// meta-llama/Llama-3.1-70B: 80 layers, 64 attention heads, 8 KV heads,
// head_dim 8192 / 64 = 128.
const llama31_70B = `{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
	"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80}`

// deepseek-ai/DeepSeek-V3: MLA, 61 layers + 1 MTP layer, latent 512 + 64.
const deepseekV3 = `{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
	"hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61,
	"kv_lora_rank": 512, "qk_rope_head_dim": 64, "num_nextn_predict_layers": 1}`

func model(t testing.TB, config string) *modelgeom.Model {
	t.Helper()
	m, err := modelgeom.ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func roles(tps ...int) []modelgeom.Role {
	out := make([]modelgeom.Role, len(tps))
	for i, tp := range tps {
		out[i] = modelgeom.Role{TP: tp, DP: 1}
	}
	return out
}

func find(rows []modelplan.Row, p, d int) modelplan.Row {
	for _, r := range rows {
		if r.Prefill.TPSize == p && r.Decode.TPSize == d {
			return r
		}
	}
	return modelplan.Row{}
}

// The rows of Llama-3.1-70B (bf16, one token per page), worked out by hand:
// a K or V page of one layer on one decode rank is max(8 / D, 1) heads ×
// 256 B, and a decode rank receives 160 of them (80 K + 80 V).
func TestAdviseLlama(t *testing.T) {
	base := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: 1}
	rows := modelplan.Advise(model(t, llama31_70B), base, false, roles(1, 2, 4, 8, 16), roles(1, 2, 4, 8, 16), transferplan.DefaultBudget)
	if len(rows) != 25 {
		t.Fatalf("%d rows, want 25", len(rows))
	}
	type want struct {
		p, d                     int
		compatible               bool
		reason, kind             string
		fragsPerPage, sources    int
		idle                     []int
		bytesPerToken, transfers int64
	}
	for _, w := range []want{
		// P8 D8: identity, whole items of 1 head: 160 × 256 B = 40960 per token.
		{8, 8, true, "", "identity", 0, 1, []int{}, 40960, 160},
		// P8 D4: 2 heads per decode rank, one from each of 2 prefill ranks:
		// 2 fragments per buffer, 320 transfers; 160 × 512 = 81920 B.
		{8, 4, true, "", "fragmented", 1, 2, []int{}, 81920, 320},
		// P16 D2: prefill ranks hold 1 head in pairs; decode rank 0 takes
		// heads 0-3 from prefill 0, 2, 4, 6: 4 × 160 = 640 transfers,
		// 160 × 1024 = 163840 B; the odd prefill ranks are idle.
		{16, 2, true, "", "fragmented", 1, 4, []int{1, 3, 5, 7, 9, 11, 13, 15}, 163840, 640},
		// P16 D8: both hold 1 head, equal items: replicated, decode d copies
		// whole items from prefill 2d; the odd prefill ranks are idle.
		{16, 8, true, "", "fragmented", 1, 1, []int{1, 3, 5, 7, 9, 11, 13, 15}, 40960, 160},
		// P2 D16: 4 heads per prefill rank against 16 decode ranks holding
		// replicas: no replica group bridges it.
		{2, 16, false, "UnsupportedHeterogeneousTP", "", 0, 0, []int{}, 0, 0},
	} {
		r := find(rows, w.p, w.d)
		if r.Compatible != w.compatible || r.Reason != w.reason || r.PlanKind != w.kind || r.FragmentsPerPage != w.fragsPerPage ||
			r.PrefillRanksPerDecodeRank != w.sources || !slices.Equal(r.IdlePrefillTPRanks, w.idle) || r.IdlePrefillRanks != len(w.idle) ||
			r.BytesPerTokenPerDecodeRank != w.bytesPerToken || r.TransfersPerPage != w.transfers {
			t.Errorf("P%d D%d: got %+v\nwant %+v", w.p, w.d, r, w)
		}
	}
	// The engine runs 64 heads / 8 KV heads at TP 1, 2, 4, 8, 16, 32 or 64.
	// Decode 1, 2, 4, 8 hold whole heads against prefill 2's 4 (decode 32
	// and 64 replicate like 16); prefill 8, 16, 32, 64 hold one head per
	// rank like decode 16's ranks (prefill 1 and 4 do not).
	fix := "decode TP 1, 2, 4 or 8 (keeping prefill TP 2), or prefill TP 8, 16, 32 or 64 (keeping decode TP 16) " +
		"would work with these 8 KV heads (TP sizes the engine can run LlamaForCausalLM with)"
	if r := find(rows, 2, 16); r.Fix != fix || r.Message == "" || r.Message[len(r.Message)-len(fix):] != fix {
		t.Errorf("P2 D16 fix\n got %q\nwant %q\nmessage %q", r.Fix, fix, r.Message)
	}
	// Cheapest first: 160 transfers from 1 prefill rank, none idle, fewest
	// GPUs: P1 D1 (identity, 2 GPUs), P1 D2 (each decode rank takes its 4
	// heads from prefill 0's 8 in one fragment per buffer, 3 GPUs), P2 D2
	// (identity, 4); incompatible rows last.
	for i, want := range [][2]int{{1, 1}, {1, 2}, {2, 2}} {
		if rows[i].Prefill.TPSize != want[0] || rows[i].Decode.TPSize != want[1] {
			t.Errorf("row %d is P%d D%d, want P%d D%d", i, rows[i].Prefill.TPSize, rows[i].Decode.TPSize, want[0], want[1])
		}
	}
	seenIncompatible := false
	for i, r := range rows {
		if !r.Compatible {
			seenIncompatible = true
		} else if seenIncompatible {
			t.Errorf("row %d (P%d D%d) is compatible but after an incompatible one", i, r.Prefill.TPSize, r.Decode.TPSize)
		}
		if i > 0 && r.Compatible && rows[i-1].Compatible && rows[i-1].TransfersPerPage > r.TransfersPerPage {
			t.Errorf("row %d costs %d transfers, fewer than row %d's %d", i, r.TransfersPerPage, i-1, rows[i-1].TransfersPerPage)
		}
	}
}

// A TP the engine refuses for the model is a row with the derivation's
// reason; MLA rows move whole latent items from one prefill rank.
func TestAdviseRefusedTPAndMLA(t *testing.T) {
	base := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: 1}
	rows := modelplan.Advise(model(t, llama31_70B), base, false, roles(3), roles(4), transferplan.DefaultBudget)
	if r := rows[0]; r.Compatible || r.Reason != "TPDoesNotSplitHeads" || r.Fix == "" {
		t.Errorf("P3 D4: %+v", r)
	}
	rows = modelplan.Advise(model(t, deepseekV3), base, false, roles(16), roles(8), transferplan.DefaultBudget)
	// 62 latent buffers (61 + 1 MTP) of 1152 B: 62 transfers, 71424 B per
	// token; decode d pulls from prefill 2d, prefill 2d+1 gets a dummy.
	if r := rows[0]; !r.Compatible || r.PlanKind != "mla" || r.TransfersPerPage != 62 || r.BytesPerTokenPerDecodeRank != 62*1152 ||
		r.PrefillRanksPerDecodeRank != 1 || r.FragmentsPerPage != 0 || r.IdlePrefillRanks != 0 {
		t.Errorf("DeepSeek-V3 P16 D8: %+v", r)
	}
}

// A row whose plans pass the plan budget says so and is not planned.
func TestAdviseRowOverBudget(t *testing.T) {
	base := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: 1}
	rows := modelplan.Advise(model(t, llama31_70B), base, false, roles(8), roles(4, 8), transferplan.Budget{MaxFragments: 100})
	// P8 D8 is identity (no fragments); P8 D4 has 4 × 320 = 1280 > 100.
	if r := rows[0]; !r.Compatible || r.Decode.TPSize != 8 {
		t.Errorf("first row %+v, want the identity P8 D8", r)
	}
	if r := rows[1]; r.Compatible || !r.OverBudget || r.Reason != "PlanTooLarge" || r.Fragments != 1280 {
		t.Errorf("second row %+v, want P8 D4 over the budget with 1280 fragments", r)
	}
}

// Qwen/Qwen3.5-27B: hybrid, 64 layers (16 full attention), 4 KV heads of
// 256, 48 linear-attention layers with 10240 convolution channels.
const qwen35 = `{"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": {"num_attention_heads": 24,
	"num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 64, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
	"linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
	"mtp_num_hidden_layers": 1}}`

// A hybrid model plans only at equal TP sizes: its convolution state holds
// each rank's q, k and v channels as three runs, which ranks of another TP
// size interleave differently. Equal sizes move whole items (identity).
func TestAdviseHybridOnlyAtEqualTP(t *testing.T) {
	base := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: 1}
	rows := modelplan.Advise(model(t, qwen35), base, false, roles(2, 4), roles(2, 4), transferplan.DefaultBudget)
	for _, r := range rows {
		equal := r.Prefill.TPSize == r.Decode.TPSize
		if r.Compatible != equal {
			t.Errorf("P%d D%d: compatible %v (%s)", r.Prefill.TPSize, r.Decode.TPSize, r.Compatible, r.Message)
		}
		if equal && r.PlanKind != "identity" {
			t.Errorf("P%d D%d: plan %s, want identity", r.Prefill.TPSize, r.Decode.TPSize, r.PlanKind)
		}
		if !equal && (r.Reason != "UnsupportedHeterogeneousTP" || !strings.Contains(r.Message, "convolution state")) {
			t.Errorf("P%d D%d: %s %s", r.Prefill.TPSize, r.Decode.TPSize, r.Reason, r.Message)
		}
	}
	// The fix names the equal sizes: P4 D2 plans with decode TP 4 or prefill TP 2.
	if r := find(rows, 4, 2); !strings.Contains(r.Fix, "decode TP 4 (keeping prefill TP 4), or prefill TP 2 (keeping decode TP 2)") {
		t.Errorf("P4 D2 fix %q", r.Fix)
	}
}
