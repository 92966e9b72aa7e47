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

package v1

import (
	"strings"
	"testing"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

func TestCheckLayout(t *testing.T) {
	rec := fixtures.MustPlan(fixtures.FragmentedP8D4()).Layout // P8→D4, items 128/256, unit 128
	live := func(mut func(*kvv1.ParallelInfo)) kvv1.ParallelInfo {
		i := kvv1.ParallelInfo{PrefillTPSize: 8, PrefillDPSize: 1, BufferLens: kvv1.BufferLens{KVItemLens: []int64{128, 128, 128, 128}, KVUnitLens: []int64{128, 128, 128, 128}}}
		if mut != nil {
			mut(&i)
		}
		return i
	}
	cases := []struct {
		name string
		info kvv1.ParallelInfo
		want string // "" = compatible; else substrings naming both values
	}{
		{"same layout", live(nil), ""},
		{"prefill TP differs", live(func(i *kvv1.ParallelInfo) { i.PrefillTPSize = 4 }), "prefill_tp_size is 4, the plan was made for prefill tensorParallelSize 8"},
		{"prefill DP differs", live(func(i *kvv1.ParallelInfo) { i.PrefillDPSize = 2 }), "prefill_dp_size is 2, the plan was made for prefill dataParallelSize 1"},
		{"L1.5 differs", live(func(i *kvv1.ParallelInfo) { i.EnableMLAL15Cache = true }), "enable_mla_l1_5_cache is true, the plan was made for mlaL15Cache false"},
		{"item lens differ", live(func(i *kvv1.ParallelInfo) { i.KVItemLens[2] = 256 }), "kv_item_lens is 256 at buffer 2, the plan was made for prefillKVItemLens[2] = 128"},
		{"buffer count differs", live(func(i *kvv1.ParallelInfo) { i.KVItemLens = i.KVItemLens[:3] }), "kv_item_lens is 3 buffers, the plan has 4"},
		// unreported items default to 256*4/8 = 128: compatible with the plan
		{"items unreported, default matches", live(func(i *kvv1.ParallelInfo) { i.KVItemLens = nil }), ""},
		// unreported units default to 1, the plan has 128
		{"units unreported", live(func(i *kvv1.ParallelInfo) { i.KVUnitLens = nil }), "kv_unit_lens is not reported, so the reference assumes 1 at buffer 0, the plan was made for prefillKVUnitLens[0] = 128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkLayout(&c.info, rec)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected mismatch: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want it to contain %q", err, c.want)
			}
		})
	}
}
