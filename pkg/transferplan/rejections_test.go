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

package transferplan

import (
	"errors"
	"strings"
	"testing"
)

// Every reason a layout is refused, with the field and the numbers the
// message must name so that a person can act on it.
func TestRejections(t *testing.T) {
	cases := []struct {
		name     string
		layout   Layout
		reason   Reason
		field    string
		mentions []string
	}{{
		name:     "unit sizes differ P8→D4",
		layout:   mha(8, 4).kvUnits(TargetK, 2, 512, 256, 256, 128).kv(TargetV, 2, 512, 256).build(),
		reason:   ReasonUnitSizeMismatch,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill unit is 128 bytes", "decode unit 256 bytes"},
	}, {
		name:     "prefill item not unit aligned",
		layout:   mha(8, 4).kv(TargetK, 1, 512, 256).kvItems(TargetV, 1, 512, 300, 256).build(),
		reason:   ReasonItemNotUnitAligned,
		field:    "kvBuffers[1]",
		mentions: []string{"kvBuffers[1] (TargetV)", "prefill item 300 bytes", "256-byte unit"},
	}, {
		name:     "decode item not unit aligned",
		layout:   mha(2, 2).state(1, 100, 128, 64).kv(TargetK, 1, 512, 256).kv(TargetV, 1, 512, 256).build(),
		reason:   ReasonItemNotUnitAligned,
		field:    "stateBuffers[0]",
		mentions: []string{"decode item 100 bytes", "64-byte unit"},
	}, {
		name:     "heterogeneous TP P8→D4 with 2 vs 3 units per rank",
		layout:   mha(8, 4).kvItems(TargetK, 1, 768, 512, 256).kvItems(TargetV, 1, 768, 512, 256).build(),
		reason:   ReasonUnsupportedHeterogeneousTP,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill holds 2 units × 8 ranks = 16, decode 3 units × 4 ranks = 12"},
	}, {
		name:     "state buffers never use KV-head replica groups",
		layout:   mha(16, 1).heads(1, 8, 256).state(1, 8*64, 64, 64).build(),
		reason:   ReasonUnsupportedHeterogeneousTP,
		field:    "stateBuffers[0]",
		mentions: []string{"prefill holds 1 units × 16 ranks = 16, decode 8 units × 1 ranks = 8"},
	}, {
		name:     "L1.5 cache on an MHA model",
		layout:   mha(4, 4).l15().kv(TargetK, 1, 512, 256).kv(TargetV, 1, 512, 256).build(),
		reason:   ReasonMLAL15RequiresMLA,
		field:    "mlaL15Cache",
		mentions: []string{"attentionBackend is MHA"},
	}, {
		name:     "16-token pages whose 4096-byte unit is bigger than a token row",
		layout:   mha(8, 4).tokensPerPage(16).kvItems(TargetK, 2, 2*4096, 4096, 4096).kvItems(TargetV, 2, 2*4096, 4096, 4096).build(),
		reason:   ReasonItemNotTokenAligned,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "pages hold 16 tokens", "16 whole rows of 4096-byte units", "prefill item holds 1 units and the decode item 2"},
	}, {
		name:     "MLA P16→D8 with the sharded-heads default prefill item",
		layout:   mla(16, 8).kvItems(TargetK, 2, 1152, 576, 1).build(),
		reason:   ReasonMLAItemSizeMismatch,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill item 576 bytes, decode item 1152 bytes", "set prefillItemBytes"},
	}, {
		name: "hybrid P4→D2 whose draft heads live on prefill rank 0 only while decode 1's state is on ranks 2 and 3",
		layout: mha(4, 2).kvItems(TargetK, 1, 64, 32, 2).kvItems(TargetV, 1, 64, 32, 2).
			kvItems(DraftK, 1, 2, 4, 2).kvItems(DraftV, 1, 2, 4, 2).state(1, 64, 32, 2).build(),
		reason:   ReasonWholeStateCopyUnsafe,
		field:    "stateBuffers[0]",
		mentions: []string{"decode TP rank 1 pulls KV cache from prefill TP rank 0", "32-byte prefill items into 64-byte decode items"},
	}, {
		name:     "dp does not divide tp",
		layout:   mha(8, 6).dp(1, 4).kv(TargetK, 1, 512, 256).kv(TargetV, 1, 512, 256).build(),
		reason:   ReasonInvalidLayout,
		field:    "decode.dataParallelSize",
		mentions: []string{"4 does not divide tensorParallelSize 6"},
	}, {
		name:     "MHA with fewer V than K buffers",
		layout:   mha(2, 2).kv(TargetK, 2, 512, 256).kv(TargetV, 1, 512, 256).build(),
		reason:   ReasonInvalidLayout,
		field:    "kvBuffers",
		mentions: []string{"2 TargetK, 1 TargetV"},
	}, {
		name:   "no KV buffers",
		layout: mha(2, 2).build(),
		reason: ReasonInvalidLayout,
		field:  "kvBuffers",
	}, {
		name:   "zero tensor parallel size",
		layout: mha(0, 2).kv(TargetK, 1, 512, 256).kv(TargetV, 1, 512, 256).build(),
		reason: ReasonInvalidLayout,
		field:  "prefill.tensorParallelSize",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Plan(tc.layout)
			var le *LayoutError
			if !errors.As(err, &le) {
				t.Fatalf("Plan = %v, %v; want a *LayoutError", set, err)
			}
			if le.Reason != tc.reason || le.Field != tc.field {
				t.Errorf("reason %s field %q, want %s %q (%s)", le.Reason, le.Field, tc.reason, tc.field, le.Message)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(le.Message, m) {
					t.Errorf("message %q does not mention %q", le.Message, m)
				}
			}
		})
	}
}

// The per-side alignment checks cannot fail for layouts buildBufferPair makes;
// they guard the interval arithmetic, so exercise them directly.
func TestAlignmentChecks(t *testing.T) {
	spec := BufferSpec{Kind: TargetK, Field: "kvBuffers[0]"}
	cases := []struct {
		name   string
		layout BufferLayout
		tp     int
		reason Reason
	}{
		{"replica group does not divide tp", BufferLayout{Axis: AxisKVHead, LogicalSize: 8, UnitBytes: 1, ItemStrideBytes: 8, ReplicaGroup: 3}, 4, ReasonShardNotAligned},
		{"logical size does not split", BufferLayout{Axis: AxisKVHead, LogicalSize: 6, UnitBytes: 1, ItemStrideBytes: 8, ReplicaGroup: 1}, 4, ReasonShardNotAligned},
		{"item smaller than shard", BufferLayout{Axis: AxisKVHead, LogicalSize: 8, UnitBytes: 2, ItemStrideBytes: 2, ReplicaGroup: 1}, 4, ReasonItemSmallerThanShard},
		{"replicated buffers are exempt", BufferLayout{Axis: AxisReplicated, LogicalSize: 7, UnitBytes: 1, ItemStrideBytes: 1, ReplicaGroup: 3}, 4, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAlignment(spec, tc.layout, tc.tp, "prefill")
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var le *LayoutError
			if !errors.As(err, &le) || le.Reason != tc.reason {
				t.Fatalf("got %v, want reason %s", err, tc.reason)
			}
		})
	}
}

func TestRoutePlanRankOutOfRange(t *testing.T) {
	p, err := NewPlanner(mha(4, 2).kv(TargetK, 1, 512, 256).kv(TargetV, 1, 512, 256).build())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{-1, 2} {
		_, err := p.RoutePlan(d)
		var le *LayoutError
		if !errors.As(err, &le) || le.Reason != ReasonRankOutOfRange || !strings.Contains(le.Message, "2 TP ranks") {
			t.Errorf("RoutePlan(%d) = %v, want RankOutOfRange naming the size", d, err)
		}
	}
}
