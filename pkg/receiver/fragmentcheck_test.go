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

package receiver

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// withState is FragmentedP8D4 with one state buffer sharded like the heads
// (128-byte prefill items, 256-byte decode items).
func withState() planv1.Layout {
	l := fixtures.FragmentedP8D4()
	l.StateBuffers = []planv1.BufferSpec{{Kind: transferplan.MambaState, Field: "stateBuffers[0]",
		PrefillItemBytes: 128, DecodeItemBytes: 256, PrefillUnitBytes: 128, DecodeUnitBytes: 128}}
	return l
}

// snapshotOf is decode TP rank 1's plan of l (P8→D4: it pulls prefill TP
// ranks 2 and 3, one 128-byte head each into its 256-byte items).
func snapshotOf(t *testing.T, l planv1.Layout) PlanSnapshot {
	t.Helper()
	snap, err := SnapshotFor(fixtures.MustPlan(l), 1)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Every plan the planner makes for the fixtures passes: the check refuses
// only what leaves the layout.
func TestFragmentCheckPassesPlannedLayouts(t *testing.T) {
	for name, l := range map[string]planv1.Layout{
		"identity": fixtures.Identity(), "fragmented": fixtures.FragmentedP8D4(),
		"16-token pages": fixtures.FragmentedP8D4Tokens16(), "replicated GQA": fixtures.ReplicatedGQAP4D1(),
		"MLA": fixtures.MLAP8D2(), "MLA L1.5": fixtures.MLAL15P2D2(), "DP attention": fixtures.DPAttention(),
		"state": withState(),
	} {
		set := fixtures.MustPlan(l)
		for d := range set.Plans {
			snap, err := SnapshotFor(set, d)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := newRouteView(snap); err != nil {
				t.Errorf("%s, decode rank %d: %v", name, d, err)
			}
		}
	}
}

// The attack of a shadow plan: each case breaks one field of one fragment
// of decode TP rank 1's plan (its target prefill TP rank 3, fragment 1:
// target_v buffer 2, 128 bytes at offset 0 of the prefill item into offset
// 128 of the 256-byte decode item). The plan must be refused with the
// reason, the place and the numbers.
func TestFragmentCheckRefusesOutOfBounds(t *testing.T) {
	cases := []struct {
		name   string
		layout planv1.Layout
		mut    func(f *transferplan.TransferFragment)
		reason FragmentReason
		kind   transferplan.BufferKind
		index  int
		detail string
	}{
		{"buffer index past the buffers", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BufferIndex = 7 },
			FragmentBufferOutOfRange, transferplan.TargetV, 7, "buffer_index 7 is outside the plan layout's 4 KV buffers"},
		{"negative buffer index", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BufferIndex = -1 },
			FragmentBufferOutOfRange, transferplan.TargetV, -1, "buffer_index -1 is outside the plan layout's 4 KV buffers"},
		{"destination 1 TiB into the item", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.DstByteOffset = 1 << 40 },
			FragmentOutsideItem, transferplan.TargetV, 2, "dst_byte_offset 1099511627776 + bytes_per_page 128 > dst_page_stride_bytes 256"},
		{"destination offset overflows", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.DstByteOffset = math.MaxInt64 },
			FragmentOutsideItem, transferplan.TargetV, 2, "dst_byte_offset 9223372036854775807 + bytes_per_page 128 > dst_page_stride_bytes 256"},
		{"page longer than the item", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BytesPerPage = 1 << 62 },
			FragmentOutsideItem, transferplan.TargetV, 2, "dst_byte_offset 128 + bytes_per_page 4611686018427387904 > dst_page_stride_bytes 256"},
		{"source past the prefill item", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.SrcByteOffset = 64 },
			FragmentOutsideItem, transferplan.TargetV, 2, "src_byte_offset 64 + bytes_per_page 128 > src_page_stride_bytes 128"},
		{"negative stride", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.DstPageStrideBytes = -256 },
			FragmentStride, transferplan.TargetV, 2, "src_page_stride_bytes 128 and dst_page_stride_bytes -256, but the layout's KV buffer 2 items are 128 bytes (prefill) and 256 bytes (decode)"},
		{"stride of another layout", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.SrcPageStrideBytes = 4096 },
			FragmentStride, transferplan.TargetV, 2, "src_page_stride_bytes 4096 and dst_page_stride_bytes 256"},
		{"negative offset", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.SrcByteOffset = -128 },
			FragmentNegative, transferplan.TargetV, 2, "src_byte_offset -128, dst_byte_offset 128, bytes_per_page 128, page_count null"},
		{"empty page", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BytesPerPage = 0 },
			FragmentNegative, transferplan.TargetV, 2, "bytes_per_page 0"},
		{"negative page count", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.PageCount = transferplan.Count(-1) },
			FragmentNegative, transferplan.TargetV, 2, "page_count -1"},
		{"another prefill rank's bytes", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.SrcRank = 5 },
			FragmentRanks, transferplan.TargetV, 2, "src_rank 5 and dst_rank 1, but the fragment belongs to prefill TP rank 3's target in decode TP rank 1's plan"},
		{"another decode rank's memory", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.DstRank = 0 },
			FragmentRanks, transferplan.TargetV, 2, "src_rank 3 and dst_rank 0"},
		{"unknown kind", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BufferKind = "target_q" },
			FragmentBufferKind, "target_q", 2, `buffer_kind "target_q" is not one of`},
		{"kind the layout does not give the buffer", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BufferKind = transferplan.TargetK },
			FragmentBufferKind, transferplan.TargetK, 2, "buffer_kind target_k, but the layout's KV buffer 2 is target_v"},
		{"state buffer of a layout without state", fixtures.FragmentedP8D4(), func(f *transferplan.TransferFragment) { f.BufferKind, f.BufferIndex = transferplan.MambaState, 0 },
			FragmentBufferOutOfRange, transferplan.MambaState, 0, "buffer_index 0 is outside the plan layout's 0 state buffers"},
		{"state buffer past the state buffers", withState(), func(f *transferplan.TransferFragment) { f.BufferKind, f.BufferIndex = transferplan.MambaState, 1 },
			FragmentBufferOutOfRange, transferplan.MambaState, 1, "buffer_index 1 is outside the plan layout's 1 state buffers"},
		{"state buffer written outside its item", withState(), func(f *transferplan.TransferFragment) {
			f.BufferKind, f.BufferIndex, f.DstByteOffset = transferplan.MambaState, 0, 256
		}, FragmentOutsideItem, transferplan.MambaState, 0, "dst_byte_offset 256 + bytes_per_page 128 > dst_page_stride_bytes 256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := snapshotOf(t, c.layout)
			target := &snap.Plan.Targets[1]
			if target.PrefillTPRank != 3 || len(target.Fragments) < 2 {
				t.Fatalf("fixture changed: decode TP rank 1's second target is %+v", target)
			}
			f := &target.Fragments[1]
			if f.BufferIndex != 2 || f.BufferKind != transferplan.TargetV || f.DstByteOffset != 128 || f.BytesPerPage != 128 {
				t.Fatalf("fixture changed: fragment 1 is %+v", *f)
			}
			c.mut(f)
			_, err := newRouteView(snap)
			var fe *FragmentError
			if !errors.As(err, &fe) {
				t.Fatalf("plan accepted or refused for another cause: %v", err)
			}
			if fe.Reason != c.reason || fe.DecodeTPRank != 1 || fe.PrefillTPRank != 3 || fe.Fragment != 1 || fe.BufferKind != c.kind || fe.BufferIndex != c.index {
				t.Fatalf("refused as %+v, want %s at decode TP rank 1, prefill TP rank 3, fragment 1 (%s buffer %d)", fe, c.reason, c.kind, c.index)
			}
			if !strings.Contains(fe.Detail, c.detail) {
				t.Fatalf("detail %q, want it to contain %q", fe.Detail, c.detail)
			}
			if CodeOf(err) != CodeFragmentOutOfBounds || !strings.HasPrefix(err.Error(), "FragmentOutOfBounds: "+string(c.reason)+": decode TP rank 1, prefill TP rank 3, fragment 1") {
				t.Fatalf("error %q (code %q) does not lead with the code, reason and place", err, CodeOf(err))
			}
		})
	}
}

// The layout's own lists are checked before any fragment is held to them.
func TestFragmentCheckRefusesBrokenLayoutLists(t *testing.T) {
	cases := []struct {
		name   string
		mut    func(r *transferplan.LayoutRecord)
		detail string
	}{
		{"prefill list shorter", func(r *transferplan.LayoutRecord) { r.PrefillKVItemLens = r.PrefillKVItemLens[:3] },
			"the layout lists 4 decode, 3 prefill KV item lengths and 4 kinds"},
		{"zero item", func(r *transferplan.LayoutRecord) { r.DecodeKVItemLens = []int64{256, 0, 256, 256} },
			"KV buffer 1 has prefill item length 128 and decode item length 0"},
		{"negative item", func(r *transferplan.LayoutRecord) { r.PrefillKVItemLens = []int64{128, 128, -128, 128} },
			"KV buffer 2 has prefill item length -128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := snapshotOf(t, fixtures.FragmentedP8D4())
			c.mut(&snap.Layout)
			_, err := newRouteView(snap)
			var fe *FragmentError
			if !errors.As(err, &fe) || fe.Reason != FragmentLayoutLists || !strings.Contains(fe.Detail, c.detail) {
				t.Fatalf("got %v, want %s with %q", err, FragmentLayoutLists, c.detail)
			}
		})
	}
}

// A plan is held to the engine's registration too: fragments that write a
// buffer the engine did not register are refused, whatever the layout says.
func TestFragmentCheckHoldsThePlanToTheEngine(t *testing.T) {
	snap := snapshotOf(t, fixtures.FragmentedP8D4())
	view, err := newRouteView(snap)
	if err != nil {
		t.Fatal(err)
	}
	if view.bounds.kvUsed != 4 || view.bounds.stateUsed != 0 {
		t.Fatalf("fragments use %d KV and %d state buffers, want 4 and 0", view.bounds.kvUsed, view.bounds.stateUsed)
	}
	engine := EngineInfo{SessionID: "127.0.0.1:17001", KVDataPtrs: []uint64{1 << 40, 2 << 40}}
	err = checkFragmentsFit(engine, view)
	var fe *FragmentError
	if !errors.As(err, &fe) || fe.Reason != FragmentBufferOutOfRange || fe.BufferIndex != 3 ||
		!strings.Contains(fe.Detail, "the plan's fragments write KV buffer 3 but the engine registered 2 KV buffers (session 127.0.0.1:17001)") {
		t.Fatalf("got %v, want the plan refused for KV buffer 3 of 2 registered", err)
	}
	engine.KVDataPtrs = append(engine.KVDataPtrs, 3<<40, 4<<40)
	if err := checkFragmentsFit(engine, view); err != nil {
		t.Fatalf("an engine with the plan's 4 KV buffers: %v", err)
	}
}
