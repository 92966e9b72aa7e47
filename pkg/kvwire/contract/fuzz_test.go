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

package contract

import (
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Fuzzers for the cache-contract wire's decoders: never a panic, every
// failure a typed *Error, and what is accepted survives encode → decode.

func addContractVectorSeeds(f *testing.F, pick func(v contractPairVectors) [][]byte) {
	for _, v := range loadContractPairs(f) {
		for _, seed := range pick(v) {
			f.Add(seed)
		}
	}
}

func FuzzDecodeManifest(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte {
		var out [][]byte
		for _, m := range v.Manifests {
			out = append(out, []byte(m.Wire))
		}
		for _, r := range v.ManifestRefusals {
			out = append(out, []byte(r.Wire))
		}
		return out
	})
	f.Add([]byte(`{"gro\u0075ps":[{"group_id":"\ud83d\ude00","block_ids":[-0, 9223372036854775807]}],"prefix_len":0,"prompt_len":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := DecodeManifest(raw)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		// encoding/json accepts the same bytes and reads the same values.
		var std struct {
			Groups []struct {
				GroupID  string  `json:"group_id"`
				BlockIDs []int64 `json:"block_ids"`
			} `json:"groups"`
			PrefixLen int64 `json:"prefix_len"`
			PromptLen int64 `json:"prompt_len"`
		}
		if err := json.Unmarshal(raw, &std); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if std.PrefixLen != m.PrefixLen || std.PromptLen != m.PromptLen || len(std.Groups) != len(m.Groups) {
			t.Fatalf("encoding/json reads %+v, DecodeManifest %+v", std, m)
		}
		for i, g := range std.Groups {
			if g.GroupID != m.Groups[i].GroupID || len(g.BlockIDs) != len(m.Groups[i].BlockIDs) ||
				(len(g.BlockIDs) > 0 && !reflect.DeepEqual(g.BlockIDs, m.Groups[i].BlockIDs)) {
				t.Fatalf("group %d: encoding/json reads %+v, DecodeManifest %+v", i, g, m.Groups[i])
			}
		}
		again, err := DecodeManifest(m.AppendWire(nil))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzValidateManifest(f *testing.F) {
	f.Add([]byte(`{"groups":[{"group_id":"full","block_ids":[5,6,63]},{"group_id":"state","block_ids":[8]},{"group_id":"window","block_ids":[1,39]}],"prefix_len":16,"prompt_len":60}`))
	f.Add([]byte(`{"groups":[],"prefix_len":64,"prompt_len":60}`))
	layout := testLayout()
	f.Fuzz(func(t *testing.T, raw []byte) {
		sum, err := ValidateManifest(raw, layout)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		m, derr := DecodeManifest(raw)
		if derr != nil {
			t.Fatalf("ValidateManifest accepts what DecodeManifest refuses: %v", derr)
		}
		if err := layout.Check(&m); err != nil || sum.PrefixLen != m.PrefixLen || sum.Groups != len(layout.Groups) {
			t.Fatalf("Check disagrees: %v, %+v", err, sum)
		}
		for i, g := range m.Groups {
			for _, id := range g.BlockIDs {
				if id < 1 || id >= layout.Groups[i].PageCount {
					t.Fatalf("accepted block %d of group %q outside [1, %d)", id, g.GroupID, layout.Groups[i].PageCount)
				}
			}
		}
	})
}

func FuzzDecodeContractRegistration(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte { return [][]byte{joinFrames(v.Ranks[0].Registration)} })
	reg := sampleContractRegistration()
	f.Add(joinFrames(reg.Frames()))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeRegistration(splitFrames(data))
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded registration fails Validate: %v", err)
		}
		again, err := DecodeRegistration(c.Frames())
		if err != nil || !sameContractRegistration(again, c) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, c)
		}
	})
}

func FuzzDecodePreAllocation(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte {
		var out [][]byte
		for _, p := range v.Manifests[0].PreAllocations {
			out = append(out, joinFrames(p.Frames))
		}
		return out
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePreAllocation(splitFrames(data))
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("decoded pre-allocation fails Validate: %v", err)
		}
		again, err := DecodePreAllocation(p.Frames())
		if err != nil || again.Room != p.Room || again.SessionID != p.SessionID || !bytes.Equal(again.Manifest, p.Manifest) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, p)
		}
	})
}

func FuzzDecodeParallelInfo(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte { return [][]byte{[]byte(v.Bootstrap.ParallelInfo)} })
	f.Add([]byte(`{"prefill_tp_size": 8, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false, "kv_item_lens": [2048], "kv_unit_lens": [], "state_item_lens": [], "state_unit_lens": []}`))
	f.Add([]byte(`{"prefill_tp_size": null, "prefill_dp_size": null, "cache_layout": null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := DecodeParallelInfo(body)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if w, err := kvwire.AnswerWire(body); err != nil || w != kvwire.WireCacheContract {
			t.Fatalf("accepted an answer of wire %q (%v)", w, err)
		}
		if c.TPPerDPGroup() < 1 || c.TPPerDPGroup() > plancontract.MaxTPSize || c.PrefillTPSize%c.PrefillDPSize != 0 {
			t.Fatalf("accepted impossible sizes %+v", c)
		}
		again, err := DecodeParallelInfo(c.MarshalPython())
		if err != nil || !bytes.Equal(again.CacheLayout, c.CacheLayout) {
			t.Fatalf("re-decode: %+v, %v", again, err)
		}
	})
}

func FuzzDecodeContractRankRegistration(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte { return [][]byte{[]byte(v.Bootstrap.RankRegistrations[0])} })
	f.Fuzz(func(t *testing.T, body []byte) {
		g, err := DecodeRankRegistration(body)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		again, err := DecodeRankRegistration(g.MarshalPython())
		if err != nil || !reflect.DeepEqual(again, g) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, g)
		}
	})
}

func FuzzManifestLayoutFromContract(f *testing.F) {
	addContractVectorSeeds(f, func(v contractPairVectors) [][]byte { return [][]byte{[]byte(v.Decode.Contract)} })
	f.Fuzz(func(t *testing.T, contract []byte) {
		l, err := ManifestLayoutFromContract(contract)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if l.PrefixGranularity < 1 {
			t.Fatalf("granularity %d", l.PrefixGranularity)
		}
		for _, g := range l.Groups {
			if g.BlockGranularity < 1 || (g.Policy == PolicyFullSuffix && g.SlidingWindowTokens < 0) {
				t.Fatalf("unusable rule accepted: %+v", g)
			}
			// Slot counts never panic and are never negative.
			if n := g.SlotCount(0, 1<<62); n < 0 {
				t.Fatalf("negative slot count for %+v", g)
			}
		}
	})
}
