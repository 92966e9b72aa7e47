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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// gqa16 is 8 KV heads of 128 bytes at 16 tokens per page, prefill TP8 (one
// head per rank: 2048-byte items) → decode TP4 (two heads: 4096-byte items).
func gqa16() planv1.Layout {
	l := layout(transferplan.MHA, 8, 1, 4, kvPair(2, 16*128, 16*256, 128))
	l.TokensPerPage = 16
	return l
}

// The planner's token-row fragments pass the peer's byte-by-byte check and
// fill every byte of every decode rank's pages.
func TestPlannedSixteenTokenPages(t *testing.T) {
	l := gqa16()
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(set.Plans[0].Targets[0].Fragments); n != 4*16 {
		t.Fatalf("%d fragments per target, want 4 buffers × 16 token rows", n)
	}
	cfg := ConfigFor(l)
	cfg.Transfer = &l
	runFleet(t, startPeer(t, cfg), l, set.Plans, []int64{20, 21})
}

// Fragments that move the wrong bytes fail the room with WrongBytes and a
// message naming the place: the reference's head-major plan of token-major
// pages, a half-unit shift of one row, a row from the wrong page stride.
func TestWrongBytesFailTheRoom(t *testing.T) {
	l := gqa16()
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatal(err)
	}
	right := set.Plans[1].Targets[1].Fragments // decode rank 1's fragments from prefill rank 3
	edit := func(change func(fs []transferplan.TransferFragment) []transferplan.TransferFragment) []transferplan.TransferFragment {
		return change(append([]transferplan.TransferFragment(nil), right...))
	}
	cases := []struct {
		name  string
		frags []transferplan.TransferFragment
	}{
		{"head-major slices of token-major pages (the reference's plan)", edit(func(fs []transferplan.TransferFragment) []transferplan.TransferFragment {
			var out []transferplan.TransferFragment
			for _, f := range fs {
				if f.SrcByteOffset == 0 { // one fragment per buffer: the prefill item into the second half
					f.BytesPerPage, f.DstByteOffset = f.SrcPageStrideBytes, f.SrcPageStrideBytes
					out = append(out, f)
				}
			}
			return out
		})},
		{"half-unit shift of row 5's destination", edit(func(fs []transferplan.TransferFragment) []transferplan.TransferFragment {
			fs[5].DstByteOffset += 64
			return fs
		})},
		{"decode page stride of the prefill item", edit(func(fs []transferplan.TransferFragment) []transferplan.TransferFragment {
			fs[0].DstPageStrideBytes = fs[0].SrcPageStrideBytes
			return fs
		})},
	}
	cfg := ConfigFor(l)
	cfg.Transfer = &l
	cfg.Default = Success(1)
	p := startPeer(t, cfg)
	r := p.RankOf(0, 3)
	d := newDecodeRank(t, "127.0.0.1:15501")
	d.register(r, len(l.KVBuffers), 0)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			room := int64(200 + i)
			d.sendRequest(r, d.request(room, 1, c.frags))
			if s := d.recvStatus(answerWithin); s.Room != room || s.State != kvwire.Failed {
				t.Fatalf("status %+v, want Failed for room %d", s, room)
			}
			errs := r.Errors()
			last := errs[len(errs)-1]
			if last.Room != room || last.Reason != ReasonWrongBytes || !strings.Contains(last.Detail, "which must hold") {
				t.Fatalf("last error %v, want %s for room %d naming what the byte must hold", last, ReasonWrongBytes, room)
			}
		})
	}
	// The right fragments pass on the same rank.
	d.sendRequest(r, d.request(300, 1, right))
	if s := d.recvStatus(answerWithin); s.Room != 300 || s.State != kvwire.Success {
		t.Fatalf("the planner's fragments: status %+v, want Success", s)
	}
}
