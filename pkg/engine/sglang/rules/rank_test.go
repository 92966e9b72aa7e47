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

import "testing"

// Rank lists only layouts SGLang serves, cheapest first: for DeepSeek-V3
// (MLA) at prefill TP 8, decode attention TP 8 (one read, no dummies)
// comes first, and decode attention TP 4 (one read, one dummy) after every
// candidate without dummies.
func TestRankPrefillFixed(t *testing.T) {
	fixed := Role{TP: 8, PageSize: 64, KVCacheDtype: "auto"}
	got := Rank(models["deepseek-ai/DeepSeek-V3"], fixed, SidePrefill)
	if len(got) == 0 {
		t.Fatal("no candidates")
	}
	if first := got[0].Role; first.AttnTP() != 8 || first.TP != 8 {
		t.Errorf("first candidate %+v, want decode TP 8, attention TP 8", first)
	}
	for i, c := range got {
		if v := Judge(Pair{Model: models["deepseek-ai/DeepSeek-V3"], Prefill: fixed, Decode: c.Role}); !v.Compatible() {
			t.Errorf("candidate %d (%+v) is refused: %v", i, c.Role, v.Refusal)
		}
		if c.Role.PageSize != 64 {
			t.Errorf("candidate %d (%+v): page size other than prefill's", i, c.Role)
		}
		if i > 0 && less(c, got[i-1], fixed.TP) {
			t.Errorf("candidate %d (%+v) is cheaper than the one before it", i, c.Role)
		}
	}
}

// For a sliding-window model only equal attention TPs are offered.
func TestRankHybridSWA(t *testing.T) {
	got := Rank(models["openai/gpt-oss-120b"], Role{TP: 4, PageSize: 16}, SideDecode)
	if len(got) == 0 {
		t.Fatal("no candidates")
	}
	for _, c := range got {
		if c.Role.AttnTP() != 4 {
			t.Errorf("prefill %+v (attention TP %d) offered against gpt-oss decode attention TP 4", c.Role, c.Role.AttnTP())
		}
	}
}
