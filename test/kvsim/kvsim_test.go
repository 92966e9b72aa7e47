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

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// Two KV heads of 2-byte units, two tokens per page: prefill TP2 holds one
// head per rank (4-byte items: rows of 2 bytes), decode TP1 both (8-byte
// items: rows of 4 bytes). The right plan takes each prefill rank's head
// from each token row into the decode row at the rank's head offset.
func p2d1() Buffer {
	return Buffer{Key: 0, Rows: 2, Prefill: Side{TP: 2, ItemBytes: 4, UnitBytes: 2}, Decode: Side{TP: 1, ItemBytes: 8, UnitBytes: 2}}
}

func rowFragments(r int) []Fragment {
	return []Fragment{
		{Index: 0, SrcStride: 4, DstStride: 8, SrcOffset: 0, DstOffset: int64(2 * r), Bytes: 2},
		{Index: 0, SrcStride: 4, DstStride: 8, SrcOffset: 2, DstOffset: int64(4 + 2*r), Bytes: 2},
	}
}

func run(t *testing.T, b Buffer, targets []Target, state ...Buffer) error {
	t.Helper()
	pl, err := b.Place()
	if err != nil {
		t.Fatal(err)
	}
	q := Request{KV: []Placement{pl}, DecodeRank: 0}
	for _, s := range state {
		sp, err := s.Place()
		if err != nil {
			t.Fatal(err)
		}
		q.State = append(q.State, sp)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	q.KVPages, q.StatePgs = ScrambledPages(rng, 3, 5), ScrambledPages(rng, 1, 3)
	m := q.NewMemory()
	for _, tg := range targets {
		if err := q.Execute(m, tg); err != nil {
			return err
		}
	}
	return q.Verify(m)
}

func TestTokenMajorRowsAreRight(t *testing.T) {
	if err := run(t, p2d1(), []Target{{PrefillRank: 0, Fragments: rowFragments(0)}, {PrefillRank: 1, Fragments: rowFragments(1)}}); err != nil {
		t.Fatal(err)
	}
}

// Each wrong plan must be refused, with a message that says where.
func TestWrongPlansAreCaught(t *testing.T) {
	headMajor := func(r int) []Fragment { // the reference's plan for token-major pages
		return []Fragment{{Index: 0, SrcStride: 4, DstStride: 8, DstOffset: int64(4 * r), Bytes: 4}}
	}
	shifted := rowFragments(1)
	shifted[1].DstOffset++ // a half-unit shift of one row's destination
	wrongStride := rowFragments(1)
	wrongStride[0].SrcStride = 8
	cases := map[string]struct {
		targets []Target
		says    string
	}{
		"head-major slices of token-major pages": {[]Target{{PrefillRank: 0, Fragments: headMajor(0)}, {PrefillRank: 1, Fragments: headMajor(1)}}, "want token"},
		"half-unit shift of a row":               {[]Target{{PrefillRank: 0, Fragments: rowFragments(0)}, {PrefillRank: 1, Fragments: shifted}}, "byte"},
		"source stride of the decode item":       {[]Target{{PrefillRank: 0, Fragments: rowFragments(0)}, {PrefillRank: 1, Fragments: wrongStride}}, "byte"},
		"second source marked dummy":             {[]Target{{PrefillRank: 0, Fragments: rowFragments(0)}, {PrefillRank: 1, Dummy: true, Fragments: rowFragments(1)}}, "holds nothing"},
		"fragments from the wrong rank":          {[]Target{{PrefillRank: 0, Fragments: rowFragments(0)}, {PrefillRank: 0, Fragments: rowFragments(1)}}, "head 0"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(t, p2d1(), c.targets)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.says)
			}
		})
	}
}

// A target without fragments copies whole items with its own item length on
// both sides; so does a target without state fragments for state buffers.
func TestWholeItemRules(t *testing.T) {
	same := Buffer{Key: 0, Rows: 4, Prefill: Side{TP: 2, ItemBytes: 16, UnitBytes: 2}, Decode: Side{TP: 2, ItemBytes: 16, UnitBytes: 2}}
	pl, err := same.Place()
	if err != nil {
		t.Fatal(err)
	}
	q := Request{KV: []Placement{pl}, DecodeRank: 1, KVPages: ScrambledPages(rand.New(rand.NewPCG(3, 4)), 2, 4)}
	m := q.NewMemory()
	if err := q.Execute(m, Target{PrefillRank: 1}); err != nil {
		t.Fatal(err)
	}
	if err := q.Verify(m); err != nil {
		t.Fatalf("identity copy: %v", err)
	}
	m = q.NewMemory()
	_ = q.Execute(m, Target{PrefillRank: 0})
	if err := q.Verify(m); err == nil {
		t.Fatal("a whole copy from the other rank's heads passed")
	}
	// KV from both prefill ranks, state sharded like the heads (one channel
	// per rank). With a state fragment from each rank it is right; without
	// one, rank 1 falls back to copying its whole state item.
	st := Buffer{Key: 1, Rows: 1, Prefill: Side{TP: 2, ItemBytes: 2, UnitBytes: 2}, Decode: Side{TP: 1, ItemBytes: 4, UnitBytes: 2}}
	state := func(r int) Fragment {
		return Fragment{State: true, Index: 0, SrcStride: 2, DstStride: 4, DstOffset: int64(2 * r), Bytes: 2}
	}
	both := []Target{{PrefillRank: 0, Fragments: append(rowFragments(0), state(0))}, {PrefillRank: 1, Fragments: append(rowFragments(1), state(1))}}
	if err := run(t, p2d1(), both, st); err != nil {
		t.Fatalf("state from both ranks: %v", err)
	}
	both[1].Fragments = rowFragments(1)
	if err := run(t, p2d1(), both, st); err == nil {
		t.Fatal("the whole-state fallback of a target without state fragments went unnoticed")
	}
}

// The fallback is harmless for a replicated state buffer: the same bytes are
// written again, and counted.
func TestReplicatedStateFallbackRewrites(t *testing.T) {
	kv, _ := p2d1().Place()
	st, err := Buffer{Key: 1, Rows: 1, Prefill: Side{TP: 2, ItemBytes: 4, UnitBytes: 2}, Decode: Side{TP: 1, ItemBytes: 4, UnitBytes: 2}}.Place()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	q := Request{KV: []Placement{kv}, State: []Placement{st}, KVPages: ScrambledPages(rng, 2, 3), StatePgs: ScrambledPages(rng, 1, 2)}
	whole := Fragment{State: true, Index: 0, SrcStride: 4, DstStride: 4, Bytes: 4}
	m := q.NewMemory()
	for _, tg := range []Target{{PrefillRank: 0, Fragments: append(rowFragments(0), whole)}, {PrefillRank: 1, Fragments: rowFragments(1)}} {
		if err := q.Execute(m, tg); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Verify(m); err != nil {
		t.Fatal(err)
	}
	if m.Rewrites(true) != 4 || m.Rewrites(false) != 0 {
		t.Errorf("rewrites: state %d (want the 4 bytes of one state item), KV %d (want 0)", m.Rewrites(true), m.Rewrites(false))
	}
}

func TestPlaceRefusesWhatNoEngineLaysOut(t *testing.T) {
	ragged := p2d1()
	ragged.Prefill.ItemBytes = 6 // 2 rows of 1.5 units
	if _, err := ragged.Place(); !errors.Is(err, ErrNotRowAligned) {
		t.Errorf("ragged rows: %v", err)
	}
	odd := Buffer{Rows: 1, Prefill: Side{TP: 8, ItemBytes: 4, UnitBytes: 2}, Decode: Side{TP: 4, ItemBytes: 6, UnitBytes: 2}}
	if _, err := odd.Place(); err == nil || !strings.Contains(err.Error(), "no engine") {
		t.Errorf("2 heads × 8 vs 3 × 4: %v", err)
	}
}

// Check holds each prefill rank's writes alone to the decode layout: the
// right rows pass and count their bytes, a half-unit shift is named.
func TestCheckPerTarget(t *testing.T) {
	pl, _ := p2d1().Place()
	q := Request{KV: []Placement{pl}, KVPages: ScrambledPages(rand.New(rand.NewPCG(7, 8)), 3, 4)}
	for r := range 2 {
		n, err := q.Check(Target{PrefillRank: r, Fragments: rowFragments(r)})
		if err != nil || n != 3*2*2 {
			t.Fatalf("rank %d: %d bytes, %v; want 12 bytes (3 pages × 2 rows × 2 bytes)", r, n, err)
		}
	}
	shifted := rowFragments(1)
	shifted[0].DstOffset--
	if _, err := q.Check(Target{PrefillRank: 1, Fragments: shifted}); err == nil || !strings.Contains(err.Error(), "which must hold token") {
		t.Fatalf("shifted row: %v", err)
	}
}

// A label tells every coordinate apart, and says them back.
func TestLabelsNameEveryCoordinate(t *testing.T) {
	base := label(3, 5, 7, 9)
	for name, other := range map[string]Label{
		"buffer": label(4, 5, 7, 9), "token": label(3, 6, 7, 9), "head": label(3, 5, 8, 9), "byte": label(3, 5, 7, 10),
		"unused page": garbage(3, 5, 7, 9),
	} {
		if other == base {
			t.Errorf("a label of another %s equals %v", name, base)
		}
	}
	if got := base.String(); got != "token 5 head 7 byte 9 of buffer key 3" {
		t.Errorf("label says %q", got)
	}
	if got := Label(0).String(); got != "nothing" {
		t.Errorf("the unwritten label says %q", got)
	}
}
