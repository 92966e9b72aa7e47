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

// Judge never panics, and a compatible verdict maps every decode rank to
// prefill ranks that exist, reading at least one.
func FuzzJudge(f *testing.F) {
	f.Add(8, 6, 16, 16, 8, false, false, true, true, "auto", "auto")
	f.Add(4, 1, 16, 16, 2, false, true, false, false, "auto", "auto")
	f.Add(4, 2, 16, 64, 1, true, false, true, true, "fp8", "fp8")
	f.Fuzz(func(t *testing.T, ptp, dtp, pbs, dbs, kv int, mla, mamba, phnd, dhnd bool, pdt, ddt string) {
		if ptp > 256 || dtp > 256 {
			t.Skip() // the handshake is per rank: keep runs short
		}
		lay := func(hnd bool) Layout {
			if hnd {
				return LayoutHND
			}
			return LayoutNHD
		}
		p := Pair{
			Model:   Model{NumHiddenLayers: 4, NumAttentionHeads: 16, NumKVHeads: kv, HeadDim: 64, UseMLA: mla, KVLoraRank: 8, QKRopeHeadDim: 4, HasMamba: mamba},
			Prefill: Role{TP: ptp, BlockSize: pbs, KVCacheLayout: lay(phnd), KVCacheDtype: pdt},
			Decode:  Role{TP: dtp, BlockSize: dbs, KVCacheLayout: lay(dhnd), KVCacheDtype: ddt},
		}
		v := Judge(p)
		if !v.Compatible() {
			if v.Refusal.Reason == "" || v.Refusal.Message == "" {
				t.Fatalf("%s: a refusal without reason or message: %+v", describe(p), v.Refusal)
			}
			return
		}
		if len(v.DecodeRanks) != dtp {
			t.Fatalf("%s: %d decode ranks", describe(p), len(v.DecodeRanks))
		}
		for _, d := range v.DecodeRanks {
			reads := 0
			for _, tg := range d.Targets {
				if tg.PrefillTPRank < 0 || tg.PrefillTPRank >= ptp {
					t.Fatalf("%s: decode rank %d targets prefill rank %d", describe(p), d.DecodeTPRank, tg.PrefillTPRank)
				}
				if !tg.IsDummy {
					reads++
				}
			}
			if reads == 0 {
				t.Fatalf("%s: decode rank %d reads nothing", describe(p), d.DecodeTPRank)
			}
		}
	})
}
