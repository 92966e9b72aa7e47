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
	"errors"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Every reason a layout is refused, with the field and the numbers the
// message must name so that a person can act on it.
func TestRejections(t *testing.T) {
	cases := []struct {
		name     string
		layout   Layout
		reason   transferplan.Reason
		field    string
		mentions []string
		// fix is the end of the message (worked out by hand; "" checks
		// only that there is one).
		fix string
	}{{
		name:     "unit sizes differ P8→D4",
		layout:   mha(8, 4).kvUnits(transferplan.TargetK, 2, 512, 256, 256, 128).kv(transferplan.TargetV, 2, 512, 256).build(),
		reason:   transferplan.ReasonUnitSizeMismatch,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill unit is 128 bytes", "decode unit 256 bytes"},
		// 256 / 128 = 2: one float8 side, one 16-bit side.
		fix: "the units are 2× apart, which is what KV caches of different dtypes give (float8 stores 1 byte per value, bfloat16 and float16 2): " +
			"run both fleets with the same --kv-cache-dtype and set the same kvCacheDtype on both roles (or equal prefillUnitBytes and decodeUnitBytes)",
	}, {
		name:     "prefill item not unit aligned",
		layout:   mha(8, 4).kv(transferplan.TargetK, 1, 512, 256).kvItems(transferplan.TargetV, 1, 512, 300, 256).build(),
		reason:   transferplan.ReasonItemNotUnitAligned,
		field:    "kvBuffers[1]",
		mentions: []string{"kvBuffers[1] (TargetV)", "prefill item 300 bytes", "256-byte unit"},
		// 300 lies between 1 × 256 and 2 × 256.
		fix: "set prefillItemBytes to a whole number of 256-byte units (tokensPerPage × heads per rank × unit): 256 or 512 are the nearest",
	}, {
		name:     "decode item not unit aligned",
		layout:   mha(2, 2).state(1, 100, 128, 64).kv(transferplan.TargetK, 1, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build(),
		reason:   transferplan.ReasonItemNotUnitAligned,
		field:    "stateBuffers[0]",
		mentions: []string{"decode item 100 bytes", "64-byte unit"},
		fix:      "set decodeItemBytes to a whole number of 64-byte units (tokensPerPage × heads per rank × unit): 64 or 128 are the nearest",
	}, {
		name:     "heterogeneous TP P8→D4 with 2 vs 3 units per rank",
		layout:   mha(8, 4).kvItems(transferplan.TargetK, 1, 768, 512, 256).kvItems(transferplan.TargetV, 1, 768, 512, 256).build(),
		reason:   transferplan.ReasonUnsupportedHeterogeneousTP,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill holds 2 units × 8 ranks = 16, decode 3 units × 4 ranks = 12"},
		// The fewer units (12) are the distinct heads. Decode t ranks hold
		// max(12/t, 1) heads (t dividing 12 or a multiple of it, up to 16):
		// only t = 6 gives items equal to the prefill's 2 heads (replicated);
		// 1, 2, 3 and 12 make 12 ≠ 16 units that no replica group of 8
		// prefill ranks bridges. Prefill t ranks with 12/t heads each hold
		// the decode's 12 in all for t = 1, 2, 3, 4, 6, 12.
		fix: "decode TP 6 (keeping prefill TP 8), or prefill TP 1, 2, 3, 4, 6 or 12 (keeping decode TP 4) would work with these 12 KV heads",
	}, {
		name:     "state buffers never use KV-head replica groups",
		layout:   mha(16, 1).heads(1, 8, 256).state(1, 8*64, 64, 64).build(),
		reason:   transferplan.ReasonUnsupportedHeterogeneousTP,
		field:    "stateBuffers[0]",
		mentions: []string{"prefill holds 1 units × 16 ranks = 16, decode 8 units × 1 ranks = 8"},
		// 8 heads, 8 state channels. Decode 2 or 4 ranks would need state
		// replica groups; decode 8 holds 1 head and 1 channel, as every
		// prefill rank does (equal items: replicated). Prefill 1, 2, 4 or 8
		// ranks shard both evenly.
		fix: "decode TP 8 (keeping prefill TP 16), or prefill TP 1, 2, 4 or 8 (keeping decode TP 1) would work with these 8 KV heads",
	}, {
		name:     "L1.5 cache on an MHA model",
		layout:   mha(4, 4).l15().kv(transferplan.TargetK, 1, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build(),
		reason:   transferplan.ReasonMLAL15RequiresMLA,
		field:    "mlaL15Cache",
		mentions: []string{"attentionBackend is MHA"},
		fix:      "set mlaL15Cache to false (and start the prefill without --enable-mla-l1-5-cache), or attentionBackend to MLA if the model is an MLA model",
	}, {
		name:     "16-token pages whose 4096-byte unit is bigger than a token row",
		layout:   mha(8, 4).tokensPerPage(16).kvItems(transferplan.TargetK, 2, 2*4096, 4096, 4096).kvItems(transferplan.TargetV, 2, 2*4096, 4096, 4096).build(),
		reason:   transferplan.ReasonItemNotTokenAligned,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "pages hold 16 tokens", "16 whole rows of 4096-byte units", "prefill item holds 1 units and the decode item 2"},
		// 8 units in all. Decode 8 holds 1 unit like every prefill rank
		// (whole slices), decode 16 holds 1 too (equal items: replicated);
		// prefill 4 holds 2 like every decode rank.
		fix: "give units as one head of one token (a unit spanning the tokens of a page has no row boundaries), or: " +
			"decode TP 8 or 16 (keeping prefill TP 8), or prefill TP 4 (keeping decode TP 4) would work",
	}, {
		name:     "MLA P16→D8 with the sharded-heads default prefill item",
		layout:   mla(16, 8).kvItems(transferplan.TargetK, 2, 1152, 576, 1).build(),
		reason:   transferplan.ReasonMLAItemSizeMismatch,
		field:    "kvBuffers[0]",
		mentions: []string{"kvBuffers[0] (TargetK)", "prefill item 576 bytes, decode item 1152 bytes", "set prefillItemBytes"},
		// 576 = 1152 × 8 / 16, the default.
		fix: "set prefillItemBytes to 1152, the decode item (its default decodeItemBytes × decode TP / prefill TP assumes sharded heads)",
	}, {
		name: "hybrid P4→D2 whose draft heads live on prefill rank 0 only while decode 1's state is on ranks 2 and 3",
		layout: mha(4, 2).kvItems(transferplan.TargetK, 1, 64, 32, 2).kvItems(transferplan.TargetV, 1, 64, 32, 2).
			kvItems(transferplan.DraftK, 1, 2, 4, 2).kvItems(transferplan.DraftV, 1, 2, 4, 2).state(1, 64, 32, 2).build(),
		reason:   transferplan.ReasonWholeStateCopyUnsafe,
		field:    "stateBuffers[0]",
		mentions: []string{"decode TP rank 1 pulls KV cache from prefill TP rank 0", "32-byte prefill items into 64-byte decode items"},
		// 64 target units and state channels, 2 draft units. Decode 1 takes
		// everything from prefill 0; decode 8 takes target, draft and state
		// of one rank from prefill d/2; decode 4 would put draft replica
		// groups (prefill 0, 2) under state shards (prefill 0..3): unsafe
		// again; 16 and more ranks need draft replica groups of more
		// prefill ranks than there are. Prefill 1 and 2 shard everything
		// over at most the decode's ranks; 8, 16, 32, 64 replicate the
		// draft buffer from the prefill rank that also holds the state.
		fix: "decode TP 1 or 8 (keeping prefill TP 4), or prefill TP 1, 2, 8, 16, 32 or 64 (keeping decode TP 2) would work",
	}, {
		name:     "dp does not divide tp",
		layout:   mha(8, 6).dp(1, 4).kv(transferplan.TargetK, 1, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build(),
		reason:   transferplan.ReasonInvalidLayout,
		field:    "decode.dataParallelSize",
		mentions: []string{"4 does not divide tensorParallelSize 6"},
		fix:      "set decode.dataParallelSize to a divisor of 6: 1, 2, 3 or 6",
	}, {
		name:     "MHA with fewer V than K buffers",
		layout:   mha(2, 2).kv(transferplan.TargetK, 2, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build(),
		reason:   transferplan.ReasonInvalidLayout,
		field:    "kvBuffers",
		mentions: []string{"2 TargetK, 1 TargetV"},
		fix:      "give the TargetK and TargetV groups the same count, one buffer of each per layer (2), or attentionBackend MLA if the model is an MLA model",
	}, {
		name:   "no KV buffers",
		layout: mha(2, 2).build(),
		reason: transferplan.ReasonInvalidLayout,
		field:  "kvBuffers",
	}, {
		name:   "zero tensor parallel size",
		layout: mha(0, 2).kv(transferplan.TargetK, 1, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build(),
		reason: transferplan.ReasonInvalidLayout,
		field:  "prefill.tensorParallelSize",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Plan(tc.layout)
			var le *transferplan.LayoutError
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
			if le.Fix == "" || !strings.HasSuffix(le.Message, ". Fix: "+le.Fix) {
				t.Errorf("the message must end with its fix: %q", le.Message)
			}
			if tc.fix != "" && le.Fix != tc.fix {
				t.Errorf("fix\n got %q\nwant %q", le.Fix, tc.fix)
			}
		})
	}
}

// The per-side alignment checks cannot fail for layouts buildBufferPair makes;
// they guard the interval arithmetic, so exercise them directly.
func TestAlignmentChecks(t *testing.T) {
	spec := BufferSpec{Kind: transferplan.TargetK, Field: "kvBuffers[0]"}
	cases := []struct {
		name   string
		layout BufferLayout
		tp     int
		reason transferplan.Reason
	}{
		{"replica group does not divide tp", BufferLayout{Axis: AxisKVHead, LogicalSize: 8, UnitBytes: 1, ItemStrideBytes: 8, ReplicaGroup: 3}, 4, transferplan.ReasonShardNotAligned},
		{"logical size does not split", BufferLayout{Axis: AxisKVHead, LogicalSize: 6, UnitBytes: 1, ItemStrideBytes: 8, ReplicaGroup: 1}, 4, transferplan.ReasonShardNotAligned},
		{"item smaller than shard", BufferLayout{Axis: AxisKVHead, LogicalSize: 8, UnitBytes: 2, ItemStrideBytes: 2, ReplicaGroup: 1}, 4, transferplan.ReasonItemSmallerThanShard},
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
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason != tc.reason {
				t.Fatalf("got %v, want reason %s", err, tc.reason)
			}
		})
	}
}

func TestRoutePlanRankOutOfRange(t *testing.T) {
	p, err := NewPlanner(mha(4, 2).kv(transferplan.TargetK, 1, 512, 256).kv(transferplan.TargetV, 1, 512, 256).build())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{-1, 2} {
		_, err := p.RoutePlan(d)
		var le *transferplan.LayoutError
		if !errors.As(err, &le) || le.Reason != transferplan.ReasonRankOutOfRange || !strings.Contains(le.Message, "2 TP ranks") {
			t.Errorf("RoutePlan(%d) = %v, want RankOutOfRange naming the size", d, err)
		}
	}
}
