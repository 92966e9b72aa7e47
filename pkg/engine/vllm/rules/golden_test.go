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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	reference "github.com/pdtopo/pdtopo/conformance/vllm"
)

// goldenCase is one case of conformance/vllm/testdata/verdicts.json
// (conformance/vllm/README.md documents the fields).
type goldenCase struct {
	Model                 string `json:"model"`
	ModelKind             string `json:"modelKind"`
	NumHiddenLayers       int    `json:"numHiddenLayers"`
	NumAttentionHeads     int    `json:"numAttentionHeads"`
	NumKVHeads            int    `json:"numKVHeads"`
	HeadDim               int    `json:"headDim"`
	KVLoraRank            int    `json:"kvLoraRank"`
	QKRopeHeadDim         int    `json:"qkRopeHeadDim"`
	SlidingWindow         int    `json:"slidingWindow"`
	FullAttentionInterval int    `json:"fullAttentionInterval"`
	UseMLA                bool   `json:"useMLA"`
	HasMamba              bool   `json:"hasMamba"`
	PrefillTP             int    `json:"prefillTP"`
	DecodeTP              int    `json:"decodeTP"`
	PrefillBlockSize      int    `json:"prefillBlockSize"`
	DecodeBlockSize       int    `json:"decodeBlockSize"`
	PrefillKVCacheLayout  Layout `json:"prefillKVCacheLayout"`
	DecodeKVCacheLayout   Layout `json:"decodeKVCacheLayout"`
	PrefillKVCacheDtype   string `json:"prefillKVCacheDtype"`
	DecodeKVCacheDtype    string `json:"decodeKVCacheDtype"`
	Accepted              bool   `json:"accepted"`
	Rule                  string `json:"rule"`
	LocalConsumers        int    `json:"localConsumers"`
	DecodeRanks           []struct {
		Rank      int   `json:"rank"`
		Handshake []int `json:"handshake"`
		Read      []int `json:"read"`
		AttnRead  []int `json:"attnRead"`
		StateRead []int `json:"stateRead"`
	} `json:"decodeRanks"`
}

func (c goldenCase) pair() Pair {
	return Pair{
		Model: Model{
			NumHiddenLayers: c.NumHiddenLayers, NumAttentionHeads: c.NumAttentionHeads, NumKVHeads: c.NumKVHeads,
			HeadDim: c.HeadDim, UseMLA: c.UseMLA, KVLoraRank: c.KVLoraRank, QKRopeHeadDim: c.QKRopeHeadDim,
			SlidingWindow: c.SlidingWindow, HasMamba: c.HasMamba, FullAttentionInterval: c.FullAttentionInterval,
		},
		Prefill:     Role{TP: c.PrefillTP, BlockSize: c.PrefillBlockSize, KVCacheLayout: c.PrefillKVCacheLayout, KVCacheDtype: c.PrefillKVCacheDtype},
		Decode:      Role{TP: c.DecodeTP, BlockSize: c.DecodeBlockSize, KVCacheLayout: c.DecodeKVCacheLayout, KVCacheDtype: c.DecodeKVCacheDtype},
		KVConnector: Connector,
	}
}

// ruleReasons maps the verdicts' rule names (docs/engines/vllm.md, "The
// rules") to the reason Judge gives.
var ruleReasons = map[string]Reason{
	"tp-divisible":                                   ReasonTPNotDivisible,
	"compatibility-hash":                             ReasonKVCacheDtypeMismatch,
	"replicated-prefill-kv-prefill-larger":           ReasonReplicatedPrefillKV,
	"same-kv-cache-layout":                           ReasonKVCacheLayoutMismatch,
	"block-contiguous-layout-for-hetero-tp":          ReasonLayoutNotBlockContiguous,
	"decode-block-multiple-of-prefill-block":         ReasonBlockSizeNotMultiple,
	"equal-block-size-prefill-larger":                ReasonBlockSizeNotEqual,
	"no-head-split-with-hetero-block-prefill-larger": ReasonHeadSplitWithHeteroBlocks,
	"block-length":                                   ReasonBlockLengthMismatch,
}

// stricterThanVLLM says where pdtopo refuses a pair vLLM accepts, by
// docs/engines/vllm.md's list of faults (the verdicts do not mark them):
// NHD with a decode rank reading attention from several prefill ranks.
func stricterThanVLLM(c goldenCase) bool {
	if !c.Accepted || c.DecodeKVCacheLayout != LayoutNHD {
		return false
	}
	for _, d := range c.DecodeRanks {
		if len(d.AttnRead) > 1 {
			return true
		}
	}
	return false
}

// verdictsEnv names another verdicts file for a local run, e.g. a larger
// sample from conformance/vllm/nixl/generate.sh with VERDICTS_ARGS="--seed
// 23 --sample 4000 --out FILE"; CI leaves it unset and reads the committed
// file.
const verdictsEnv = "PDTOPO_VLLM_VERDICTS"

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	path, err := reference.Reference("VLLM_NIXL_VERDICTS")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("..", "..", "..", "..", filepath.FromSlash(path))
	if p := os.Getenv(verdictsEnv); p != "" {
		path, file = p, p
		t.Logf("%s: reading %s", verdictsEnv, p)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var verdicts struct {
		NixlCommit string       `json:"vllmNixlCommit"`
		Cases      []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &verdicts); err != nil {
		t.Fatal(err)
	}
	if verdicts.NixlCommit != reference.NixlCommit {
		t.Fatalf("%s is from %s, reference.env names %s", path, verdicts.NixlCommit, reference.NixlCommit)
	}
	if len(verdicts.Cases) < 1000 {
		t.Fatalf("%s holds %d cases, want the whole grid", path, len(verdicts.Cases))
	}
	return verdicts.Cases
}

// Judge against vLLM's own answers: accepted exactly when the engine
// accepts (but where pdtopo is stricter), refused by the engine's rule,
// and every decode rank's targets, reads, attention and state ranks as the
// engine maps them.
func TestJudgeMatchesVLLMVerdicts(t *testing.T) {
	var matched, stricter int
	for i, c := range loadGolden(t) {
		v := Judge(c.pair())
		name := func() string {
			return c.Model + " " + describe(c.pair())
		}
		switch {
		case stricterThanVLLM(c):
			if v.Compatible() || v.Refusal.Reason != ReasonNHDMultiSourceRead || !v.Refusal.StricterThanEngine {
				t.Errorf("case %d (%s): vLLM accepts but reads the wrong bytes; Judge = %+v, want %s, stricter", i, name(), v.Refusal, ReasonNHDMultiSourceRead)
			}
			stricter++
			continue
		case !c.Accepted:
			want, ok := ruleReasons[c.Rule]
			if !ok {
				t.Fatalf("case %d: rule %q has no reason in ruleReasons", i, c.Rule)
			}
			if v.Compatible() || v.Refusal.Reason != want {
				t.Errorf("case %d (%s): vLLM refuses by %s; Judge = %+v, want %s", i, name(), c.Rule, v.Refusal, want)
				continue
			}
		case !v.Compatible():
			t.Errorf("case %d (%s): vLLM accepts; Judge refuses: %v", i, name(), v.Refusal)
			continue
		default:
			if !sameMapping(t, i, name(), c, v) {
				continue
			}
		}
		matched++
	}
	t.Logf("%d cases matched, %d where pdtopo is stricter", matched, stricter)
}

func sameMapping(t *testing.T, i int, name string, c goldenCase, v Verdict) bool {
	t.Helper()
	ok := true
	if v.LocalConsumers != c.LocalConsumers {
		t.Errorf("case %d (%s): local consumers %d, vLLM %d", i, name, v.LocalConsumers, c.LocalConsumers)
		ok = false
	}
	if len(v.DecodeRanks) != len(c.DecodeRanks) {
		t.Errorf("case %d (%s): %d decode ranks, vLLM %d", i, name, len(v.DecodeRanks), len(c.DecodeRanks))
		return false
	}
	for j, want := range c.DecodeRanks {
		got := v.DecodeRanks[j]
		var handshake, read []int
		for _, tg := range got.Targets {
			handshake = append(handshake, tg.PrefillTPRank)
			if !tg.IsDummy {
				read = append(read, tg.PrefillTPRank)
			}
		}
		if got.DecodeTPRank != want.Rank || !slices.Equal(handshake, want.Handshake) || !slices.Equal(read, want.Read) ||
			!slices.Equal(got.AttentionFrom, want.AttnRead) || !slices.Equal(orEmpty(got.StateFrom), want.StateRead) {
			t.Errorf("case %d (%s) decode rank %d: handshake %v read %v attn %v state %v; vLLM %v %v %v %v",
				i, name, want.Rank, handshake, read, got.AttentionFrom, got.StateFrom, want.Handshake, want.Read, want.AttnRead, want.StateRead)
			ok = false
		}
	}
	return ok
}

func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// Every refusal of the golden pairs names a fix that changes one setting
// into a pair Judge accepts (none falls back to "no layout … works").
func TestGoldenRefusalsHaveFixes(t *testing.T) {
	for i, c := range loadGolden(t) {
		v := Judge(c.pair())
		if v.Compatible() {
			continue
		}
		if r := v.Refusal; r.Fix == "" || strings.HasPrefix(r.Fix, "no layout") || !strings.HasSuffix(r.Message, ". Fix: "+r.Fix) {
			t.Errorf("case %d (%s): %s without a working fix: %q", i, describe(c.pair()), r.Reason, r.Message)
		}
	}
}
