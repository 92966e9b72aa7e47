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

// Judge never panics, and a compatible verdict gives every decode rank of
// every stage targets that exist: a prefill attention-TP rank below the
// prefill attention TP, a stage below its PP size, at least one read.
func FuzzJudge(f *testing.F) {
	f.Add(6, 1, 1, 4, 1, 1, 16, 16, 2, false, 0)
	f.Add(16, 2, 2, 4, 2, 1, 64, 64, 1, true, 0)
	f.Add(1, 1, 1, 4, 1, 1, 16, 16, 8, false, 18)
	f.Fuzz(func(t *testing.T, ptp, pdp, ppp, dtp, ddp, dpp, ppage, dpage, kv int, mla bool, swa int) {
		if ptp > 256 || dtp > 256 || ppp > 16 || dpp > 16 {
			t.Skip() // keep runs short
		}
		p := Pair{
			Model:   Model{NumAttentionHeads: 16, NumKVHeads: kv, HeadDim: 64, NumHiddenLayers: 4, UseMLA: mla, SlidingWindowLayers: swa},
			Prefill: Role{TP: ptp, DP: pdp, PP: ppp, PageSize: ppage},
			Decode:  Role{TP: dtp, DP: ddp, PP: dpp, PageSize: dpage},
		}
		v := Judge(p)
		if !v.Compatible() {
			if v.Refusal.Reason == "" || v.Refusal.Message == "" {
				t.Fatalf("%+v: a refusal without reason or message: %+v", p, v.Refusal)
			}
			return
		}
		if len(v.DecodeRanks) != dtp*p.Decode.pp() {
			t.Fatalf("%+v: %d decode ranks", p, len(v.DecodeRanks))
		}
		for _, d := range v.DecodeRanks {
			reads := 0
			for _, tg := range d.Targets {
				if tg.PrefillTPRank < 0 || tg.PrefillTPRank >= p.Prefill.AttnTP() || tg.PrefillPPRank < 0 || tg.PrefillPPRank >= p.Prefill.pp() {
					t.Fatalf("%+v: decode rank %d/%d targets prefill %d/%d", p, d.DecodeTPRank, d.DecodePPRank, tg.PrefillTPRank, tg.PrefillPPRank)
				}
				if !tg.IsDummy {
					reads++
				}
			}
			if reads == 0 {
				t.Fatalf("%+v: decode rank %d reads nothing", p, d.DecodeTPRank)
			}
		}
	})
}
