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
	"fmt"
)

// Side is one role's geometry of one buffer.
type Side struct {
	// TP is the number of TP ranks of the role (per DP group).
	TP int
	// ItemBytes is one page of the buffer on one rank; UnitBytes one head of
	// one token (one channel of a state buffer).
	ItemBytes, UnitBytes int64
}

// Buffer is one buffer as both sides lay it out.
type Buffer struct {
	// Key tells buffers apart in labels; KV and state buffers need distinct keys.
	Key int
	// Rows is the number of token rows in one page: tokensPerPage for KV
	// buffers, 1 for state buffers and for layouts labelled flat.
	Rows int
	// Whole says every rank of both sides holds the whole buffer (MLA's latent cache).
	Whole           bool
	Prefill, Decode Side
}

// ErrNotRowAligned says an item does not hold Rows rows of whole units, so
// it has no token-major meaning: only whole-item copies of it can be judged.
var ErrNotRowAligned = errors.New("item is not a whole number of token rows of whole units")

// Placement is where the heads of a buffer live on every rank.
type Placement struct {
	Buffer
	// preRow, decRow are the heads in one token row of a rank's item.
	preRow, decRow int64
	// preStart, decStart give the first head a rank holds.
	preStart, decStart func(rank int) int64
}

// Place works out which heads every rank holds, from how engines shard heads:
// rank r of a side holding n heads per token holds heads [r·n, (r+1)·n) when
// both sides hold the same number of heads in total; ranks share heads in
// consecutive groups when the prefill has more ranks than distinct head
// ranges; every rank holds the same heads when the items are equal but the
// totals are not (replicated) or the buffer is Whole.
func (b Buffer) Place() (Placement, error) {
	p, d := b.Prefill, b.Decode
	if p.TP < 1 || d.TP < 1 || b.Rows < 1 || p.UnitBytes < 1 || p.UnitBytes != d.UnitBytes {
		return Placement{}, fmt.Errorf("buffer key %d: no consistent geometry (TP %d/%d, rows %d, units %d/%d)",
			b.Key, p.TP, d.TP, b.Rows, p.UnitBytes, d.UnitBytes)
	}
	row := int64(b.Rows) * p.UnitBytes
	if p.ItemBytes%row != 0 || d.ItemBytes%row != 0 {
		return Placement{}, fmt.Errorf("buffer key %d: items %d/%d bytes, %d rows of %d-byte units: %w",
			b.Key, p.ItemBytes, d.ItemBytes, b.Rows, p.UnitBytes, ErrNotRowAligned)
	}
	pl := Placement{Buffer: b, preRow: p.ItemBytes / row, decRow: d.ItemBytes / row}
	if err := pl.checkFields(); err != nil {
		return Placement{}, err
	}
	zero := func(int) int64 { return 0 }
	sharded := func(n int64) func(int) int64 { return func(r int) int64 { return int64(r) * n } }
	heads := pl.decRow * int64(d.TP)
	switch {
	case b.Whole:
		pl.preStart, pl.decStart = zero, zero
	case pl.preRow*int64(p.TP) == heads:
		pl.preStart, pl.decStart = sharded(pl.preRow), sharded(pl.decRow)
	case p.ItemBytes == d.ItemBytes:
		pl.preStart, pl.decStart = zero, zero
	case heads%pl.preRow == 0 && heads/pl.preRow <= int64(p.TP) && int64(p.TP)%(heads/pl.preRow) == 0:
		group, n := int64(p.TP)/(heads/pl.preRow), pl.preRow
		pl.preStart = func(r int) int64 { return int64(r) / group * n }
		pl.decStart = sharded(pl.decRow)
	default:
		return Placement{}, fmt.Errorf("buffer key %d: prefill %d heads × %d ranks, decode %d heads × %d ranks: no engine lays heads out so",
			b.Key, pl.preRow, p.TP, pl.decRow, d.TP)
	}
	return pl, nil
}

// checkFields keeps every label field of this buffer within 16 bits.
func (pl Placement) checkFields() error {
	heads := max(pl.preRow*int64(pl.Prefill.TP), pl.decRow*int64(pl.Decode.TP))
	if pl.Key < 0 || pl.Key >= fieldMax>>1 || heads > fieldMax || pl.Prefill.UnitBytes > fieldMax {
		return fmt.Errorf("buffer key %d: %d heads of %d bytes are too many to label", pl.Key, heads, pl.Prefill.UnitBytes)
	}
	return nil
}

// prefillLabel is byte x of the item that prefill rank holds for request page.
func (pl *Placement) prefillLabel(rank int, page, x int64) Label {
	return pl.at(page, x, pl.Prefill.ItemBytes, pl.preStart(rank))
}

// decodeLabel is what byte x of decode rank's item for request page must hold.
func (pl *Placement) decodeLabel(rank int, page, x int64) Label {
	return pl.at(page, x, pl.Decode.ItemBytes, pl.decStart(rank))
}

// at labels byte x of a token-major item: row x / rowBytes is the token,
// the rest the head (offset by the rank's first head) and byte in the head.
func (pl *Placement) at(page, x, item, firstHead int64) Label {
	u := pl.Prefill.UnitBytes
	rowBytes := item / int64(pl.Rows)
	row, inRow := x/rowBytes, x%rowBytes
	return label(pl.Key, page*int64(pl.Rows)+row, firstHead+inRow/u, inRow%u)
}
