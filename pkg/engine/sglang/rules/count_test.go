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
	"slices"
	"testing"
)

// Count and Idle, which Size and advise read instead of a mapping, agree
// with the mapping Judge builds rank by rank, at every small layout.
func TestCountMatchesMapping(t *testing.T) {
	n := 0
	for _, mla := range []bool{false, true} {
		m := Model{NumAttentionHeads: 8, NumKVHeads: 8, HeadDim: 128, NumHiddenLayers: 4, UseMLA: mla}
		for _, pr := range smallRoles() {
			for _, dr := range smallRoles() {
				p := Pair{Model: m, Prefill: pr, Decode: dr}
				v := Judge(p)
				if !v.Compatible() {
					continue
				}
				n++
				checkCount(t, p, v)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d compatible layouts compared", n)
	}
}

func smallRoles() []Role {
	var out []Role
	for tp := 1; tp <= 8; tp++ {
		for dp := 1; dp <= tp; dp++ {
			for pp := 1; pp <= 3; pp++ {
				if tp%dp == 0 {
					out = append(out, Role{TP: tp, DP: dp, PP: pp, PageSize: 16})
				}
			}
		}
	}
	return out
}

func checkCount(t *testing.T, p Pair, v Verdict) {
	t.Helper()
	c := Count(p)
	if int64(len(v.DecodeRanks)) != c.DecodeRanks {
		t.Fatalf("%+v: Count %d decode ranks, mapping %d", p, c.DecodeRanks, len(v.DecodeRanks))
	}
	read := make([]bool, p.Prefill.AttnTP())
	for _, d := range v.DecodeRanks {
		reads := 0
		for _, tg := range d.Targets {
			if !tg.IsDummy {
				reads++
				read[tg.PrefillTPRank] = true
			}
		}
		if len(d.Targets) != c.Targets || reads != c.Reads || d.RequiredDstInfoNum != c.DstInfo || d.RequiredPrefillResponseNum != c.Responses {
			t.Fatalf("%+v rank %d: %d targets, %d read, dst %d, responses %d; Count %+v",
				p, d.DecodeTPRank, len(d.Targets), reads, d.RequiredDstInfoNum, d.RequiredPrefillResponseNum, c)
		}
	}
	idle := []int{}
	for r, ok := range read {
		if !ok {
			idle = append(idle, r)
		}
	}
	if got := Idle(p); !slices.Equal(got, idle) {
		t.Fatalf("%+v: Idle %v, mapping leaves %v", p, got, idle)
	}
}
