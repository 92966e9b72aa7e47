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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	reference "github.com/pdtopo/pdtopo/conformance/sglang"
)

// models are the golden cases' models, their config.json numbers as
// conformance/sglang/models.py has them.
var models = map[string]Model{
	"meta-llama/Meta-Llama-3-8B-Instruct":  {NumAttentionHeads: 32, NumKVHeads: 8, NumHiddenLayers: 32, HeadDim: 128},
	"meta-llama/Meta-Llama-3-70B-Instruct": {NumAttentionHeads: 64, NumKVHeads: 8, NumHiddenLayers: 80, HeadDim: 128},
	"Qwen/Qwen3-8B":                        {NumAttentionHeads: 32, NumKVHeads: 8, NumHiddenLayers: 36, HeadDim: 128},
	"Qwen/Qwen3-30B-A3B":                   {NumAttentionHeads: 32, NumKVHeads: 4, NumHiddenLayers: 48, HeadDim: 128},
	"Qwen/Qwen2.5-1.5B-Instruct":           {NumAttentionHeads: 12, NumKVHeads: 2, NumHiddenLayers: 28, HeadDim: 128},
	"bigcode/starcoder":                    {NumAttentionHeads: 48, NumKVHeads: 1, NumHiddenLayers: 40, HeadDim: 128},
	"deepseek-ai/DeepSeek-V3":              {NumAttentionHeads: 128, NumKVHeads: 1, NumHiddenLayers: 61, HeadDim: 576, UseMLA: true},
	"deepseek-ai/DeepSeek-V3.2-Exp":        {NumAttentionHeads: 128, NumKVHeads: 1, NumHiddenLayers: 61, HeadDim: 576, UseMLA: true, DSAIndexer: true},
	// layer_types alternates sliding_attention and full_attention.
	"openai/gpt-oss-120b": {NumAttentionHeads: 64, NumKVHeads: 8, NumHiddenLayers: 36, HeadDim: 64, SlidingWindowLayers: 18},
	// full_attention_interval 4: 36 of 48 layers are Gated DeltaNet.
	"Qwen/Qwen3-Next-80B-A3B-Instruct":     {NumAttentionHeads: 16, NumKVHeads: 2, NumHiddenLayers: 48, HeadDim: 256, MambaLayers: 36},
	"meta-llama/Llama-3.1-8B-Instruct":     {NumAttentionHeads: 32, NumKVHeads: 8, NumHiddenLayers: 32, HeadDim: 128},
	"meta-llama/Llama-3.1-70B-Instruct":    {NumAttentionHeads: 64, NumKVHeads: 8, NumHiddenLayers: 80, HeadDim: 128},
	"Qwen/Qwen2.5-72B-Instruct":            {NumAttentionHeads: 64, NumKVHeads: 8, NumHiddenLayers: 80, HeadDim: 128},
	"mistralai/Mixtral-8x7B-Instruct-v0.1": {NumAttentionHeads: 32, NumKVHeads: 8, NumHiddenLayers: 32, HeadDim: 128},
	// Gemma's sliding window is a mask over a full pool in SGLang: no SWA state.
	"google/gemma-3-27b-it":       {NumAttentionHeads: 32, NumKVHeads: 16, NumHiddenLayers: 62, HeadDim: 128},
	"google/gemma-2-27b-it":       {NumAttentionHeads: 32, NumKVHeads: 16, NumHiddenLayers: 46, HeadDim: 128},
	"zai-org/GLM-4.5":             {NumAttentionHeads: 96, NumKVHeads: 8, NumHiddenLayers: 92, HeadDim: 128},
	"moonshotai/Kimi-K2-Instruct": {NumAttentionHeads: 64, NumKVHeads: 1, NumHiddenLayers: 61, HeadDim: 576, UseMLA: true},
	"openai/gpt-oss-20b":          {NumAttentionHeads: 64, NumKVHeads: 8, NumHiddenLayers: 24, HeadDim: 64, SlidingWindowLayers: 12},
	// Llama 4's chunked attention is SGLang's hybrid SWA pool.
	"meta-llama/Llama-4-Scout-17B-16E-Instruct": {NumAttentionHeads: 40, NumKVHeads: 8, NumHiddenLayers: 48, HeadDim: 128, SlidingWindowLayers: 36},
	"nvidia/NVIDIA-Nemotron-Nano-9B-v2":         {NumAttentionHeads: 40, NumKVHeads: 8, NumHiddenLayers: 56, HeadDim: 128, MambaLayers: 27},
}

type goldenTarget struct {
	PrefillTPRank int  `json:"prefillTPRank"`
	PrefillPPRank int  `json:"prefillPPRank"`
	IsDummy       bool `json:"isDummy"`
}

// goldenCase is one case of conformance/sglang/testdata/verdicts.json
// (conformance/sglang/README.md documents the fields).
type goldenCase struct {
	ID                                         int      `json:"id"`
	Backend                                    Backend  `json:"backend"`
	Model                                      string   `json:"model"`
	NumKVHeads                                 int      `json:"numKVHeads"`
	IsMLA                                      bool     `json:"isMLA"`
	StateTypes                                 []string `json:"stateTypes"`
	PrefillTP, PrefillDP, PrefillAttnTP        int
	PrefillPP, PrefillPageSize                 int
	PrefillKVCacheDtype                        string
	DecodeTP, DecodeDP, DecodeAttnTP           int
	DecodePP, DecodePageSize                   int
	DecodeKVCacheDtype                         string
	EngineVerdict, RefusalStage, ExceptionType string
	EngineWrong                                bool
	PdtopoVerdict, PdtopoReason                string
	DecodeRanks                                []struct {
		DecodeTPRank               int            `json:"decodeTPRank"`
		DecodePPRank               int            `json:"decodePPRank"`
		DecodeAttnTPRank           int            `json:"decodeAttnTPRank"`
		RequiredDstInfoNum         int            `json:"requiredDstInfoNum"`
		RequiredPrefillResponseNum int            `json:"requiredPrefillResponseNum"`
		Targets                    []goldenTarget `json:"targets"`
	} `json:"decodeRanks"`
}

func (c goldenCase) pair(t *testing.T) Pair {
	m, ok := models[c.Model]
	if !ok {
		t.Fatalf("case %d: model %s not in the table", c.ID, c.Model)
	}
	p := Pair{
		Model:   m,
		Prefill: Role{TP: c.PrefillTP, DP: c.PrefillDP, PP: c.PrefillPP, PageSize: c.PrefillPageSize, KVCacheDtype: c.PrefillKVCacheDtype},
		Decode:  Role{TP: c.DecodeTP, DP: c.DecodeDP, PP: c.DecodePP, PageSize: c.DecodePageSize, KVCacheDtype: c.DecodeKVCacheDtype},
		Backend: c.Backend,
	}
	// The table and the case agree on what the rules read.
	if m.UseMLA != c.IsMLA || m.NumKVHeads != c.NumKVHeads || !slices.Equal(m.stateTypes(), c.StateTypes) ||
		p.Prefill.AttnTP() != c.PrefillAttnTP || p.Decode.AttnTP() != c.DecodeAttnTP {
		t.Fatalf("case %d (%s): the model table or attention TP disagrees with the case", c.ID, c.Model)
	}
	return p
}

func (c goldenCase) name() string {
	return fmt.Sprintf("%d %s %s TP %d/DP %d/PP %d → TP %d/DP %d/PP %d, page %d → %d, %s → %s", c.ID, c.Backend, c.Model,
		c.PrefillTP, c.PrefillDP, c.PrefillPP, c.DecodeTP, c.DecodeDP, c.DecodePP, c.PrefillPageSize, c.DecodePageSize,
		c.PrefillKVCacheDtype, c.DecodeKVCacheDtype)
}

// stageReasons maps what SGLang raised (the stage and exception of a
// refused case) to the reason Judge gives; handshake refusals are told
// apart by pdtopoReason, the rule generate.judge names from the message.
var stageReasons = map[string]Reason{
	"handshake/page_size_mismatch":                  ReasonPageSizeMismatch,
	"handshake/kv_cache_dtype_mismatch":             ReasonKVCacheDtypeMismatch,
	"handshake/pp_size_mismatch":                    ReasonPPSizeMismatch,
	"first_request/tp_ratio_not_divisible":          ReasonTPRatioNotDivisible,
	"prefill_mid_transfer/hybrid_state_tp_mismatch": ReasonHybridStateTPMismatch,
}

// verdictsEnv names another verdicts file for a local run, e.g. a larger
// sample from conformance/sglang/generate.sh --cases 3000 --out FILE; CI
// leaves it unset and reads the committed file.
const verdictsEnv = "PDTOPO_SGLANG_VERDICTS"

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	path := filepath.Join("..", "..", "..", "..", filepath.FromSlash(reference.Verdicts))
	if p := os.Getenv(verdictsEnv); p != "" {
		path = p
		t.Logf("%s: reading %s", verdictsEnv, p)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 300 {
		t.Fatalf("%s holds %d cases", reference.Verdicts, len(file.Cases))
	}
	return file.Cases
}

// Judge against SGLang's own answers: compatible exactly when SGLang
// serves the pair, but where it accepts a ratio that does not divide
// (engineWrong: pdtopo refuses, stricter); refused by the rule SGLang
// raised; every decode rank's targets, dummies and counts as SGLang
// resolves them.
func TestJudgeMatchesSGLangVerdicts(t *testing.T) {
	var matched, stricter int
	for _, c := range loadGolden(t) {
		v := Judge(c.pair(t))
		switch {
		case c.EngineWrong:
			if v.Compatible() || v.Refusal.Reason != ReasonTPRatioNotDivisible || !v.Refusal.StricterThanEngine {
				t.Errorf("case %s: SGLang accepts but reads the wrong heads; Judge = %+v, want %s, stricter", c.name(), v.Refusal, ReasonTPRatioNotDivisible)
			}
			stricter++
			continue
		case c.EngineVerdict == "refused":
			want, ok := stageReasons[c.RefusalStage+"/"+c.PdtopoReason]
			if !ok {
				t.Fatalf("case %s: %s/%s has no reason in stageReasons", c.name(), c.RefusalStage, c.PdtopoReason)
			}
			if v.Compatible() || v.Refusal.Reason != want || v.Refusal.StricterThanEngine {
				t.Errorf("case %s: SGLang refuses at %s (%s); Judge = %+v, want %s", c.name(), c.RefusalStage, c.ExceptionType, v.Refusal, want)
				continue
			}
		case !v.Compatible():
			t.Errorf("case %s: SGLang accepts; Judge refuses: %v", c.name(), v.Refusal)
			continue
		default:
			if !sameMapping(t, c, v) {
				continue
			}
		}
		matched++
	}
	t.Logf("%d cases matched, %d where pdtopo is stricter", matched, stricter)
}

func sameMapping(t *testing.T, c goldenCase, v Verdict) bool {
	t.Helper()
	type key struct{ tp, pp int }
	got := map[key]DecodeRank{}
	for _, d := range v.DecodeRanks {
		got[key{d.DecodeTPRank, d.DecodePPRank}] = d
	}
	if len(got) != len(c.DecodeRanks) {
		t.Errorf("case %s: %d decode ranks, SGLang %d", c.name(), len(got), len(c.DecodeRanks))
		return false
	}
	ok := true
	for _, want := range c.DecodeRanks {
		d := got[key{want.DecodeTPRank, want.DecodePPRank}]
		targets := make([]goldenTarget, len(d.Targets))
		for i, tg := range d.Targets {
			targets[i] = goldenTarget(tg)
		}
		if d.DecodeAttnTPRank != want.DecodeAttnTPRank || !slices.Equal(targets, want.Targets) ||
			d.RequiredDstInfoNum != want.RequiredDstInfoNum || d.RequiredPrefillResponseNum != want.RequiredPrefillResponseNum {
			t.Errorf("case %s decode rank %d/%d: %+v; SGLang %+v", c.name(), want.DecodeTPRank, want.DecodePPRank, d, want)
			ok = false
		}
	}
	return ok
}

// Every refusal of the golden pairs names a fix that changes one setting
// into a pair Judge accepts (none falls back to "no TP size … works").
func TestGoldenRefusalsHaveFixes(t *testing.T) {
	for _, c := range loadGolden(t) {
		v := Judge(c.pair(t))
		if v.Compatible() {
			continue
		}
		if r := v.Refusal; r.Fix == "" || strings.HasPrefix(r.Fix, "no TP size") || !strings.HasSuffix(r.Message, ". Fix: "+r.Fix) {
			t.Errorf("case %s: %s without a working fix: %q", c.name(), r.Reason, r.Message)
		}
	}
}
