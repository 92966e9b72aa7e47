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

package kvsim

import "fmt"

// Fragment is one v1 transfer fragment, as the prefill executes it.
type Fragment struct {
	// State says the fragment names a state buffer (the second index space).
	State bool
	Index int
	// The v1 fields: for every page, copy Bytes bytes from
	// page × SrcStride + SrcOffset to page × DstStride + DstOffset.
	SrcStride, DstStride, SrcOffset, DstOffset, Bytes int64
}

// Target is one prefill rank a decode rank's plan sends a request to.
type Target struct {
	PrefillRank int
	// Dummy targets get empty index frames and copy nothing.
	Dummy     bool
	Fragments []Fragment
}

// Pages says where the pages of one request sit: request page i is in
// prefill slot Src[i] and decode slot Dst[i]; Slots is the number of page
// slots of every buffer region on both sides. Owner, when set, says request
// page i is held by prefill rank Owner[i] alone (MLA L1.5): other ranks hold
// something else in that slot and send only the pages they own.
type Pages struct {
	Src, Dst []int
	Slots    int
	Owner    []int
}

// Request is one room as seen by one decode rank: the buffers of both index
// spaces, the KV pages and the state slots (state buffers are paged by
// request slot, not by token).
type Request struct {
	KV, State         []Placement
	KVPages, StatePgs Pages
	DecodeRank        int
}

// Memory is the decode rank's buffers after a transfer: one region of
// Slots × item bytes per buffer, every byte a Label (0: never written).
type Memory struct {
	kv, state [][]Label
	// rewrites counts, per index space (KV, state), bytes written again
	// with the bytes they already held.
	rewrites [2]int
}

// NewMemory allocates the decode rank's empty regions for a request.
func (q *Request) NewMemory() *Memory {
	m := &Memory{kv: make([][]Label, len(q.KV)), state: make([][]Label, len(q.State))}
	for i := range q.KV {
		m.kv[i] = make([]Label, int64(q.KVPages.Slots)*q.KV[i].Decode.ItemBytes)
	}
	for i := range q.State {
		m.state[i] = make([]Label, int64(q.StatePgs.Slots)*q.State[i].Decode.ItemBytes)
	}
	return m
}

// Execute runs one target's request as the reference prefill does. With no
// fragments it copies whole items of every buffer, page by page, using its
// own item length as the stride on both sides. With fragments, a KV buffer
// gets exactly the fragments that name it (none: nothing); state buffers get
// their fragments when the target has any state fragment, and whole items
// otherwise.
func (q *Request) Execute(m *Memory, t Target) error {
	return q.run(t, func(pl *Placement, state bool, i int, p int, d int64, got Label) error {
		regions := m.kv
		if state {
			regions = m.state
		}
		region := regions[i]
		if d < 0 || d >= int64(len(region)) {
			return fmt.Errorf("prefill rank %d, buffer key %d, page %d: writes byte %d outside the decode's %d-byte region", t.PrefillRank, pl.Key, p, d, len(region))
		}
		if region[d] != 0 {
			if region[d] != got {
				return fmt.Errorf("prefill rank %d, buffer key %d, page %d: decode byte %d already holds %v, overwritten with %v", t.PrefillRank, pl.Key, p, d, region[d], got)
			}
			m.rewrites[spaceOf(state)]++
		}
		region[d] = got
		return nil
	})
}

// Check runs one target's request like Execute but holds every byte it
// writes, as it writes it, to what the decode rank's layout wants there
// (without memory: a prefill rank alone fills only part of the decode
// buffers). It returns the number of bytes written.
func (q *Request) Check(t Target) (int64, error) {
	var n int64
	err := q.run(t, func(pl *Placement, state bool, i int, p int, d int64, got Label) error {
		_, pages := q.space(state)
		item := pl.Decode.ItemBytes
		slot := d / item
		if d < 0 || slot >= int64(pages.Slots) {
			return fmt.Errorf("prefill rank %d, buffer key %d, page %d: writes byte %d outside the decode's %d-page region", t.PrefillRank, pl.Key, p, d, pages.Slots)
		}
		want := Label(0)
		for pg, s := range pages.Dst {
			if int64(s) == slot {
				want = pl.decodeLabel(q.DecodeRank, int64(pg), d%item)
				break
			}
		}
		if got != want {
			return fmt.Errorf("prefill rank %d, buffer key %d, request page %d: writes %v to byte %d of decode slot %d, which must hold %v",
				t.PrefillRank, pl.Key, p, got, d%item, slot, want)
		}
		n++
		return nil
	})
	return n, err
}

// put receives one byte a target writes: to byte d of the decode region of
// buffer i (state or KV), for request page p.
type put func(pl *Placement, state bool, i int, p int, d int64, got Label) error

func (q *Request) run(t Target, write put) error {
	if t.Dummy {
		return nil
	}
	var hasState bool
	for _, f := range t.Fragments {
		hasState = hasState || f.State
	}
	if len(t.Fragments) == 0 {
		for i := range q.KV {
			if err := q.copyWhole(write, t.PrefillRank, false, i); err != nil {
				return err
			}
		}
	}
	if !hasState {
		for i := range q.State {
			if err := q.copyWhole(write, t.PrefillRank, true, i); err != nil {
				return err
			}
		}
	}
	for _, f := range t.Fragments {
		if err := q.copyFragment(write, t.PrefillRank, f); err != nil {
			return err
		}
	}
	return nil
}

func (q *Request) space(state bool) ([]Placement, *Pages) {
	if state {
		return q.State, &q.StatePgs
	}
	return q.KV, &q.KVPages
}

func (q *Request) copyWhole(write put, rank int, state bool, i int) error {
	bufs, pages := q.space(state)
	item := bufs[i].Prefill.ItemBytes
	return q.copyPages(write, rank, state, i, Fragment{State: state, Index: i, SrcStride: item, DstStride: item, Bytes: item}, pages)
}

func (q *Request) copyFragment(write put, rank int, f Fragment) error {
	bufs, pages := q.space(f.State)
	if f.Index < 0 || f.Index >= len(bufs) {
		return fmt.Errorf("prefill rank %d: fragment names buffer %d of %d (state %v)", rank, f.Index, len(bufs), f.State)
	}
	if f.Bytes < 0 {
		return fmt.Errorf("prefill rank %d: fragment of buffer %d moves %d bytes", rank, f.Index, f.Bytes)
	}
	return q.copyPages(write, rank, f.State, f.Index, f, pages)
}

// copyPages copies f for every request page the rank sends, byte by byte.
func (q *Request) copyPages(write put, rank int, state bool, i int, f Fragment, pages *Pages) error {
	bufs, _ := q.space(state)
	pl := &bufs[i]
	srcLen := int64(pages.Slots) * pl.Prefill.ItemBytes
	for p := range pages.Src {
		if pages.Owner != nil && pages.Owner[p] != rank {
			continue
		}
		src0 := int64(pages.Src[p])*f.SrcStride + f.SrcOffset
		dst0 := int64(pages.Dst[p])*f.DstStride + f.DstOffset
		for k := int64(0); k < f.Bytes; k++ {
			s := src0 + k
			if s < 0 || s >= srcLen {
				return fmt.Errorf("prefill rank %d, buffer key %d, page %d: reads byte %d outside the %d-byte region", rank, pl.Key, p, s, srcLen)
			}
			if err := write(pl, state, i, p, dst0+k, q.prefillByte(pl, pages, rank, s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefillByte is byte s of a prefill rank's region of a buffer.
func (q *Request) prefillByte(pl *Placement, pages *Pages, rank int, s int64) Label {
	item := pl.Prefill.ItemBytes
	slot, x := int(s/item), s%item
	for p, sl := range pages.Src {
		if sl == slot && (pages.Owner == nil || pages.Owner[p] == rank) {
			return pl.prefillLabel(rank, int64(p), x)
		}
	}
	return garbage(pl.Key, rank, slot, x)
}

// Rewrites is how many decode bytes of KV buffers (state false) or state
// buffers were written more than once, always with the bytes they already
// held (a different byte is an Execute error).
func (m *Memory) Rewrites(state bool) int { return m.rewrites[spaceOf(state)] }

func spaceOf(state bool) int {
	if state {
		return 1
	}
	return 0
}

// Verify checks every byte of the decode rank's regions: the slots of the
// request's pages hold exactly the token, head and byte the decode rank's
// layout puts there; other slots were never written.
func (q *Request) Verify(m *Memory) error {
	for i := range q.KV {
		if err := q.verify(m.kv[i], &q.KV[i], &q.KVPages); err != nil {
			return err
		}
	}
	for i := range q.State {
		if err := q.verify(m.state[i], &q.State[i], &q.StatePgs); err != nil {
			return err
		}
	}
	return nil
}

func (q *Request) verify(region []Label, pl *Placement, pages *Pages) error {
	item := pl.Decode.ItemBytes
	pageOf := make([]int, pages.Slots)
	for s := range pageOf {
		pageOf[s] = -1
	}
	for p, s := range pages.Dst {
		pageOf[s] = p
	}
	for d, got := range region {
		slot, x := int64(d)/item, int64(d)%item
		want := Label(0)
		if p := pageOf[slot]; p >= 0 {
			want = pl.decodeLabel(q.DecodeRank, int64(p), x)
		}
		if got != want {
			return fmt.Errorf("decode rank %d, buffer key %d, slot %d, byte %d of the item: holds %v, want %v", q.DecodeRank, pl.Key, slot, x, got, want)
		}
	}
	return nil
}
