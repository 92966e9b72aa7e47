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
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/kvsim"
)

// maxCheckedPages bounds the request pages a rank executes byte by byte (the
// first ones), so that a request of thousands of pages costs a bounded check.
const maxCheckedPages = 64

// maxCoverageRooms bounds the (room, session) byte counts kept.
const maxCoverageRooms = 4096

type roomSession struct {
	room    int64
	session string
}

// transferCheck executes every non-dummy request's fragments as the
// reference prefill does — per page, page × src stride + src offset →
// page × dst stride + dst offset, bytes_per_page bytes, whole items for a
// target without fragments — on synthetic memories whose every byte names
// its token, head, byte within the head and buffer, and holds each byte a
// rank writes to what the decode rank's layout wants there. Prefill pages are
// taken in a scrambled order of the rank's own; decode pages are the
// request's kv_indices and mamba_indices.
type transferCheck struct {
	layout    planv1.Layout
	kv, state []kvsim.Placement
	// placeErr says the layout has no engine placement; every request fails with it.
	placeErr error

	mu sync.Mutex
	// written counts the bytes written per room and decode session over all ranks.
	written map[roomSession]int64
}

func newTransferCheck(l planv1.Layout) *transferCheck {
	c := &transferCheck{layout: l, written: map[roomSession]int64{}}
	c.kv, c.placeErr = placements(l, l.KVBuffers, l.TokensPerPage, 0)
	if c.placeErr == nil {
		c.state, c.placeErr = placements(l, l.StateBuffers, 1, 1)
	}
	return c
}

// placements describes buffers to kvsim: MLA ranks hold whole latent caches;
// items that are not whole token rows are labelled flat (one row a page),
// which only whole-item copies can match.
func placements(l planv1.Layout, bufs []planv1.BufferSpec, rows, keyOffset int) ([]kvsim.Placement, error) {
	out := make([]kvsim.Placement, len(bufs))
	for i, b := range bufs {
		kb := kvsim.Buffer{Key: 2*i + keyOffset, Rows: rows, Whole: l.Attention == transferplan.MLA,
			Prefill: kvsim.Side{TP: l.Prefill.TPPerDP(), ItemBytes: b.PrefillItemBytes, UnitBytes: b.PrefillUnitBytes},
			Decode:  kvsim.Side{TP: l.Decode.TPPerDP(), ItemBytes: b.DecodeItemBytes, UnitBytes: b.DecodeUnitBytes}}
		pl, err := kb.Place()
		if errors.Is(err, kvsim.ErrNotRowAligned) {
			kb.Rows = 1
			pl, err = kb.Place()
		}
		if err != nil {
			return nil, err
		}
		out[i] = pl
	}
	return out, nil
}

// check runs one request of prefill rank r; nil when every byte is right.
func (c *transferCheck) check(r *Rank, q *kvv1.Request) *RankError {
	fail := func(format string, args ...any) *RankError {
		return &RankError{EngineRank: r.EngineRank, Room: q.Room, Reason: ReasonWrongBytes, Detail: fmt.Sprintf(format, args...)}
	}
	if c.placeErr != nil {
		return fail("the layout has no engine placement: %v", c.placeErr)
	}
	decodeRank := r.TPRank // whole items move between same-numbered ranks (identity)
	if len(q.Fragments) > 0 {
		decodeRank = q.Fragments[0].DstRank
	}
	rng := rand.New(rand.NewPCG(uint64(q.Room), uint64(r.EngineRank)))
	kvPages, err := pagesOf(rng, q.KVIndices)
	if err != nil {
		return fail("kv_indices: %v", err)
	}
	statePages, err := pagesOf(rng, q.MambaIndices)
	if err != nil {
		return fail("mamba_indices: %v", err)
	}
	req := kvsim.Request{KV: c.kv, State: c.state, KVPages: kvPages, StatePgs: statePages, DecodeRank: decodeRank}
	if len(q.MambaIndices) == 0 {
		req.State = nil // no state slots in the request: the prefill sends no state
	}
	target := kvsim.Target{PrefillRank: r.TPRank, Fragments: make([]kvsim.Fragment, len(q.Fragments))}
	for i, f := range q.Fragments {
		target.Fragments[i] = kvsim.Fragment{State: f.BufferKind == transferplan.MambaState, Index: f.BufferIndex,
			SrcStride: f.SrcPageStrideBytes, DstStride: f.DstPageStrideBytes,
			SrcOffset: f.SrcByteOffset, DstOffset: f.DstByteOffset, Bytes: f.BytesPerPage}
	}
	n, err := req.Check(target)
	if err != nil {
		return fail("executing the request's %d fragments for decode TP rank %d: %v", len(q.Fragments), decodeRank, err)
	}
	c.mu.Lock()
	if len(c.written) >= maxCoverageRooms {
		clear(c.written)
	}
	c.written[roomSession{q.Room, q.SessionID}] += n
	c.mu.Unlock()
	return nil
}

// pagesOf places the request's first pages: decode slots are the indices,
// prefill slots a scrambled order of the rank's own first pages. A page
// index the request repeats is checked once (the first time): two request
// pages in one decode slot have no single right content.
func pagesOf(rng *rand.Rand, indices []int64) (kvsim.Pages, error) {
	var dst []int
	seen := map[int64]bool{}
	for _, x := range indices {
		if len(dst) == maxCheckedPages {
			break
		}
		if x < 0 || x > 1<<20 {
			return kvsim.Pages{}, fmt.Errorf("page index %d is outside [0, %d]", x, 1<<20)
		}
		if !seen[x] {
			seen[x] = true
			dst = append(dst, int(x))
		}
	}
	if len(dst) == 0 {
		return kvsim.Pages{}, nil
	}
	return kvsim.Pages{Src: rng.Perm(len(dst)), Dst: dst, Slots: max(slices.Max(dst)+1, len(dst))}, nil
}

// TransferredBytes is how many bytes the peer's ranks wrote, when checking
// transfers (Config.Transfer), for one decode rank (its transfer-engine
// session) in one room: the sum over every prefill rank of what its
// fragments, or whole items, moved page by page.
func (p *Peer) TransferredBytes(room int64, session string) int64 {
	if p.check == nil {
		return 0
	}
	p.check.mu.Lock()
	defer p.check.mu.Unlock()
	return p.check.written[roomSession{room, session}]
}
