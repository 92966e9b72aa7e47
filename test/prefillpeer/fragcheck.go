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

package prefillpeer

import (
	"bytes"
	"fmt"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// fragmentCheck is what a rank concluded about one fragment payload: a
// target's payload is the same for every room, so it is decoded and checked
// once and remembered by its bytes.
type fragmentCheck struct {
	version   []byte
	fragments []transferplan.TransferFragment
	decodeErr error
	// problems are the first few faults found (without a room), and
	// problemCount all of them.
	problems     []*RankError
	problemCount int
}

const (
	maxCachedPayloads  = 256
	maxProblemsPerLoad = 4
)

// fragmentCache decodes and checks payloads for one rank. Only the rank's
// receive goroutine uses it.
type fragmentCache struct {
	rank    *Rank
	entries map[string]*fragmentCheck
	// last is the entry of the most recent decode call, read right after
	// kvv1.DecodeRequestWith returns.
	last *fragmentCheck
}

// decode is a kvv1.FragmentDecoder.
func (c *fragmentCache) decode(version, payload []byte) ([]transferplan.TransferFragment, error) {
	e, ok := c.entries[string(payload)] // no allocation for the lookup
	if !ok || !bytes.Equal(e.version, version) {
		e = &fragmentCheck{version: bytes.Clone(version)}
		e.fragments, e.decodeErr = kvv1.DecodeFragments(version, payload)
		if e.decodeErr == nil {
			c.rank.checkFragments(e)
		}
		if len(c.entries) >= maxCachedPayloads {
			clear(c.entries) // plans change rarely; a full reset is simplest
		}
		c.entries[string(payload)] = e
	}
	c.last = e
	return e.fragments, e.decodeErr
}

// checkFragments holds fragments to this rank's own layout: each must name
// this rank as source, one of its buffers, that buffer's item length as the
// source stride, and a whole-unit byte range inside the item; all fragments
// of one request go to one decode rank.
func (r *Rank) checkFragments(e *fragmentCheck) {
	add := func(reason ErrorReason, i int, f *transferplan.TransferFragment, format string, args ...any) {
		e.problemCount++
		if len(e.problems) < maxProblemsPerLoad {
			detail := fmt.Sprintf("fragment %d (%s buffer %d): ", i, f.BufferKind, f.BufferIndex) + fmt.Sprintf(format, args...)
			e.problems = append(e.problems, &RankError{EngineRank: r.EngineRank, Room: NoRoom, Reason: reason, Detail: detail})
		}
	}
	for i := range e.fragments {
		f := &e.fragments[i]
		if f.SrcRank != r.TPRank {
			add(ReasonFragmentSrcRank, i, f, "src_rank %d, but this is prefill TP rank %d", f.SrcRank, r.TPRank)
		}
		if f.DstRank != e.fragments[0].DstRank {
			add(ReasonFragmentDstRank, i, f, "dst_rank %d, fragment 0 says %d", f.DstRank, e.fragments[0].DstRank)
		}
		item, unit, known, ok := r.bufferLens(f.BufferKind, f.BufferIndex)
		if !known {
			continue // no layout configured for this kind: nothing to hold it to
		}
		if !ok {
			add(ReasonFragmentBuffer, i, f, "this rank has no such buffer")
			continue
		}
		if f.SrcPageStrideBytes != item {
			add(ReasonFragmentStride, i, f, "src_page_stride_bytes %d, but the item is %d bytes", f.SrcPageStrideBytes, item)
		}
		if f.SrcByteOffset < 0 || f.BytesPerPage <= 0 || f.SrcByteOffset > item-f.BytesPerPage {
			add(ReasonFragmentOutsideItem, i, f, "bytes [%d, %d+%d) leave the %d-byte item", f.SrcByteOffset, f.SrcByteOffset, f.BytesPerPage, item)
		}
		if f.SrcByteOffset%unit != 0 || f.BytesPerPage%unit != 0 {
			add(ReasonFragmentUnitAlignment, i, f, "offset %d and length %d are not whole %d-byte units", f.SrcByteOffset, f.BytesPerPage, unit)
		}
	}
}

// bufferLens returns the item and unit length of one of this rank's
// buffers. known is false when the rank was given no layout at all; a rank
// with KV buffers and no state buffers knows it has no state buffer.
func (r *Rank) bufferLens(kind transferplan.BufferKind, index int) (item, unit int64, known, ok bool) {
	if len(r.buffers.KVItemLens) == 0 && len(r.buffers.StateItemLens) == 0 {
		return 0, 0, false, false
	}
	items, units := r.buffers.KVItemLens, r.buffers.KVUnitLens
	if kind == transferplan.MambaState {
		items, units = r.buffers.StateItemLens, r.buffers.StateUnitLens
	}
	if index < 0 || index >= len(items) {
		return 0, 0, true, false
	}
	unit = 1
	if len(units) > 0 {
		unit = units[index]
	}
	return items[index], unit, true, true
}

// checkPointers: the reference indexes the decode rank's kv pointers by its
// own buffer index and compares state pointer counts, so a registration
// must carry exactly one pointer per buffer of this rank.
func (r *Rank) checkPointers(g *kvv1.Registration) *RankError {
	if n := len(r.buffers.KVItemLens); n > 0 && len(g.KVPtrs) != n {
		return &RankError{EngineRank: r.EngineRank, Room: NoRoom, Reason: ReasonPointerCount,
			Detail: fmt.Sprintf("session %s registered %d kv pointers; this rank has %d kv buffers", g.SessionID, len(g.KVPtrs), n)}
	}
	if n := len(r.buffers.StateItemLens); n > 0 && len(g.StatePtrs) != n {
		return &RankError{EngineRank: r.EngineRank, Room: NoRoom, Reason: ReasonPointerCount,
			Detail: fmt.Sprintf("session %s registered %d state pointers; this rank has %d state buffers", g.SessionID, len(g.StatePtrs), n)}
	}
	return nil
}
