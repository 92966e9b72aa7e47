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

package rules

import "testing"

// Rank lists only accepted layouts, cheapest first: for llama at prefill
// TP 8, block 16, decode TP 8 or 16 at block 16 (one read, one descriptor
// a block) come before larger blocks and before decode TP 4 (two reads).
func TestRankPrefillFixed(t *testing.T) {
	fixed := role(8, 16, LayoutHND, "auto")
	got := Rank(llama8B, fixed, SidePrefill)
	if len(got) == 0 {
		t.Fatal("no candidates")
	}
	if first := got[0].Role; first.TP != 8 || first.BlockSize != 16 {
		t.Errorf("first candidate %+v, want decode TP 8, block 16", first)
	}
	seenTwoReads := false
	for i, c := range got {
		p := Pair{Model: llama8B, Prefill: fixed, Decode: c.Role}
		if !Judge(p).Compatible() {
			t.Errorf("candidate %d (%s) is refused", i, describe(p))
		}
		if c.Role.BlockSize%16 != 0 || (c.Role.TP < 8 && c.Role.BlockSize != 16) {
			t.Errorf("candidate %d (%s) breaks the block rules", i, describe(p))
		}
		if i > 0 && less(c, got[i-1], fixed.TP) {
			t.Errorf("candidate %d (%s) is cheaper than the one before it", i, describe(p))
		}
		if c.Cost.ReadsPerDecodeRank == 2 {
			seenTwoReads = true
		} else if seenTwoReads && c.Cost.ReadsPerDecodeRank < 2 {
			t.Errorf("candidate %d (%s): one read after a two-read candidate", i, describe(p))
		}
	}
	if !seenTwoReads {
		t.Error("decode TP 4 (two reads a rank) is missing")
	}
}

// With decode fixed, the prefill layouts offered keep rule 3: for llama
// (8 KV heads) at decode TP 4, no prefill TP 16.
func TestRankDecodeFixed(t *testing.T) {
	for _, c := range Rank(llama8B, role(4, 16, LayoutHND, "auto"), SideDecode) {
		if c.Role.TP > 8 {
			t.Errorf("prefill TP %d offered against decode TP 4 with 8 KV heads", c.Role.TP)
		}
	}
}
