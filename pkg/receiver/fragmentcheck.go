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
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// A fragment tells a prefill rank where to write in this decode rank's GPU
// memory: the buffer (an index into the pointers the engine registered),
// the stride between pages and the byte range inside each page's item. The
// reference prefill writes where it is told, so the agent refuses a plan
// with any fragment that leaves the plan's own layout before anything of it
// reaches the wire, whoever wrote the plan.

// FragmentReason says what is wrong with a refused fragment (stable).
type FragmentReason string

const (
	// FragmentBufferOutOfRange: buffer_index names no buffer of its kind in
	// the plan's layout (or in the engine's registration).
	FragmentBufferOutOfRange FragmentReason = "BufferIndexOutOfRange"
	// FragmentBufferKind: buffer_kind is unknown or not the kind the layout
	// gives that KV buffer.
	FragmentBufferKind FragmentReason = "BufferKindMismatch"
	// FragmentNegative: an offset is negative or a length not positive.
	FragmentNegative FragmentReason = "NegativeOffsetOrLength"
	// FragmentOutsideItem: offset + bytes_per_page passes the item stride.
	FragmentOutsideItem FragmentReason = "OutsideItem"
	// FragmentStride: a page stride is not the item length of the layout.
	FragmentStride FragmentReason = "StrideMismatch"
	// FragmentRanks: src_rank is not the target, or dst_rank not this rank.
	FragmentRanks FragmentReason = "RankMismatch"
	// FragmentLayoutLists: the layout's own buffer lists disagree in length
	// or hold a non-positive item length, so nothing can be checked.
	FragmentLayoutLists FragmentReason = "LayoutBufferLists"
)

// FragmentError is a plan refused for one fragment (or, with Fragment -1,
// for its layout's buffer lists or the engine's registration). Its code is
// CodeFragmentOutOfBounds.
type FragmentError struct {
	Reason        FragmentReason
	DecodeTPRank  int
	PrefillTPRank int // -1 for a layout error
	Fragment      int // index in the target's fragments; -1 for a layout error
	BufferKind    transferplan.BufferKind
	BufferIndex   int
	// Detail names the numbers: "dst_byte_offset 1099511627776 +
	// bytes_per_page 256 > dst_page_stride_bytes 256".
	Detail string
}

func (e *FragmentError) Error() string {
	where := fmt.Sprintf("decode TP rank %d, prefill TP rank %d, fragment %d (%s buffer %d)", e.DecodeTPRank, e.PrefillTPRank, e.Fragment, e.BufferKind, e.BufferIndex)
	if e.Fragment < 0 {
		where = fmt.Sprintf("decode TP rank %d (%s buffer %d)", e.DecodeTPRank, e.BufferKind, e.BufferIndex)
	}
	return fmt.Sprintf("%s: %s: %s: %s; the plan is refused, nothing of it is sent", CodeFragmentOutOfBounds, e.Reason, where, e.Detail)
}

// bufferLens are one kind's item lengths on both sides.
type bufferLens struct {
	prefill, decode []int64
	kinds           []transferplan.BufferKind // KV only; may be empty
	name            string                    // "KV" or "state"
}

// fragmentBounds holds a plan's fragments to its layout.
type fragmentBounds struct {
	decodeRank int
	kv, state  bufferLens
	// kvUsed and stateUsed are one more than the highest buffer index any
	// fragment names: what the engine's registration must cover.
	kvUsed, stateUsed int
}

// newFragmentBounds checks the layout lists fragments are held to.
func newFragmentBounds(snap *PlanSnapshot) (*fragmentBounds, error) {
	l := &snap.Layout
	b := &fragmentBounds{
		decodeRank: snap.Plan.DecodeTPRank,
		kv:         bufferLens{prefill: l.PrefillKVItemLens, decode: l.DecodeKVItemLens, kinds: l.KVBufferKinds, name: "KV"},
		state:      bufferLens{prefill: l.PrefillStateItemLens, decode: l.DecodeStateItemLens, name: "state"},
	}
	for _, lens := range []*bufferLens{&b.kv, &b.state} {
		if err := b.checkLens(lens); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *fragmentBounds) checkLens(lens *bufferLens) error {
	kind := transferplan.MambaState
	if lens.name == "KV" {
		kind = transferplan.TargetK
	}
	layoutErr := func(i int, format string, args ...any) error {
		return &FragmentError{Reason: FragmentLayoutLists, DecodeTPRank: b.decodeRank, PrefillTPRank: -1, Fragment: -1,
			BufferKind: kind, BufferIndex: i, Detail: fmt.Sprintf(format, args...)}
	}
	n := len(lens.decode)
	if len(lens.prefill) != n || (len(lens.kinds) != 0 && len(lens.kinds) != n) {
		return layoutErr(-1, "the layout lists %d decode, %d prefill %s item lengths and %d kinds; they must match",
			n, len(lens.prefill), lens.name, len(lens.kinds))
	}
	for i := range n {
		if lens.decode[i] <= 0 || lens.prefill[i] <= 0 {
			return layoutErr(i, "%s buffer %d has prefill item length %d and decode item length %d; both must be positive",
				lens.name, i, lens.prefill[i], lens.decode[i])
		}
	}
	return nil
}

// check holds one target's fragments to the layout: each names a buffer of
// its kind, its own prefill rank as source and this decode rank as
// destination, the layout's item lengths as strides, and a byte range
// inside the item on both sides.
func (b *fragmentBounds) check(t *transferplan.PlanTarget) error {
	for i := range t.Fragments {
		f := &t.Fragments[i]
		reason, detail := b.checkOne(t.PrefillTPRank, f)
		if reason != "" {
			return &FragmentError{Reason: reason, DecodeTPRank: b.decodeRank, PrefillTPRank: t.PrefillTPRank, Fragment: i,
				BufferKind: f.BufferKind, BufferIndex: f.BufferIndex, Detail: detail}
		}
	}
	return nil
}

func (b *fragmentBounds) checkOne(prefillRank int, f *transferplan.TransferFragment) (FragmentReason, string) {
	lens, used := &b.kv, &b.kvUsed
	switch {
	case f.BufferKind == transferplan.MambaState:
		lens, used = &b.state, &b.stateUsed
	case !f.BufferKind.IsKV():
		return FragmentBufferKind, fmt.Sprintf("buffer_kind %q is not one of target_k, target_v, draft_k, draft_v, mamba_state", f.BufferKind)
	}
	n := len(lens.decode)
	if f.BufferIndex < 0 || f.BufferIndex >= n {
		return FragmentBufferOutOfRange, fmt.Sprintf("buffer_index %d is outside the plan layout's %d %s buffers", f.BufferIndex, n, lens.name)
	}
	if len(lens.kinds) > 0 && lens.kinds[f.BufferIndex] != f.BufferKind {
		return FragmentBufferKind, fmt.Sprintf("buffer_kind %s, but the layout's KV buffer %d is %s", f.BufferKind, f.BufferIndex, lens.kinds[f.BufferIndex])
	}
	if f.SrcRank != prefillRank || f.DstRank != b.decodeRank {
		return FragmentRanks, fmt.Sprintf("src_rank %d and dst_rank %d, but the fragment belongs to prefill TP rank %d's target in decode TP rank %d's plan",
			f.SrcRank, f.DstRank, prefillRank, b.decodeRank)
	}
	if f.SrcByteOffset < 0 || f.DstByteOffset < 0 || f.BytesPerPage <= 0 || (f.PageCount.Valid && f.PageCount.Value < 0) {
		return FragmentNegative, fmt.Sprintf("src_byte_offset %d, dst_byte_offset %d, bytes_per_page %d, page_count %s: offsets must be non-negative, lengths positive",
			f.SrcByteOffset, f.DstByteOffset, f.BytesPerPage, pageCount(f.PageCount))
	}
	pre, dec := lens.prefill[f.BufferIndex], lens.decode[f.BufferIndex]
	if f.SrcPageStrideBytes != pre || f.DstPageStrideBytes != dec {
		return FragmentStride, fmt.Sprintf("src_page_stride_bytes %d and dst_page_stride_bytes %d, but the layout's %s buffer %d items are %d bytes (prefill) and %d bytes (decode)",
			f.SrcPageStrideBytes, f.DstPageStrideBytes, lens.name, f.BufferIndex, pre, dec)
	}
	// written as subtractions: a sum of two huge values could overflow
	if f.DstByteOffset > dec-f.BytesPerPage {
		return FragmentOutsideItem, fmt.Sprintf("dst_byte_offset %d + bytes_per_page %d > dst_page_stride_bytes %d", f.DstByteOffset, f.BytesPerPage, dec)
	}
	if f.SrcByteOffset > pre-f.BytesPerPage {
		return FragmentOutsideItem, fmt.Sprintf("src_byte_offset %d + bytes_per_page %d > src_page_stride_bytes %d", f.SrcByteOffset, f.BytesPerPage, pre)
	}
	*used = max(*used, f.BufferIndex+1)
	return "", ""
}

func pageCount(c transferplan.OptionalCount) string {
	if !c.Valid {
		return "null"
	}
	return fmt.Sprint(c.Value)
}

// checkFragmentsFit holds a checked plan's fragments to the buffers the
// engine registered: a prefill rank indexes the registered pointers by
// buffer_index.
func checkFragmentsFit(info EngineInfo, v *routeView) error {
	for _, k := range []struct {
		name       string
		kind       transferplan.BufferKind
		used, have int
	}{{"KV", transferplan.TargetK, v.bounds.kvUsed, len(info.KVDataPtrs)}, {"state", transferplan.MambaState, v.bounds.stateUsed, len(info.StateDataPtrs)}} {
		if k.used > k.have {
			return &FragmentError{Reason: FragmentBufferOutOfRange, DecodeTPRank: v.bounds.decodeRank, PrefillTPRank: -1, Fragment: -1,
				BufferKind: k.kind, BufferIndex: k.used - 1,
				Detail: fmt.Sprintf("the plan's fragments write %s buffer %d but the engine registered %d %s buffers (session %s)", k.name, k.used-1, k.have, k.name, info.SessionID)}
		}
	}
	return nil
}
