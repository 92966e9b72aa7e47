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
	"fmt"
	"math/rand/v2"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/kvsim"
)

// simulateBytes executes the plans of a compatible layout byte by byte with
// kvsim, as the reference prefill would, for up to maxRanks decode ranks
// (always rank 0 and the last), over a few pages in scrambled slots on both
// sides, and checks every byte of every decode buffer.
func simulateBytes(rng *rand.Rand, l Layout, plans []transferplan.RoutePlan, maxRanks int) error {
	kv, flatKV, err := placements(l, l.KVBuffers, l.TokensPerPage, 0)
	if err != nil {
		return err
	}
	state, flatState, err := placements(l, l.StateBuffers, 1, 1)
	if err != nil {
		return err
	}
	for _, p := range sampleRanks(rng, plans, maxRanks) {
		if err := checkFlatWhole(p, l, flatKV, flatState); err != nil {
			return err
		}
		n := 1 + rng.IntN(3)
		q := kvsim.Request{KV: kv, State: state, DecodeRank: p.DecodeTPRank,
			KVPages:  kvsim.ScrambledPages(rng, n, n+1+rng.IntN(2)),
			StatePgs: kvsim.ScrambledPages(rng, 1, 2+rng.IntN(2))}
		if l.MLAL15Cache {
			// Every prefill rank holds some of the pages and sends those.
			q.KVPages.Owner = make([]int, n)
			for i := range q.KVPages.Owner {
				q.KVPages.Owner[i] = rng.IntN(l.Prefill.TPPerDP())
			}
		}
		m := q.NewMemory()
		for _, tg := range p.Targets {
			if err := q.Execute(m, simTarget(tg)); err != nil {
				return fmt.Errorf("decode rank %d: %w", p.DecodeTPRank, err)
			}
		}
		if err := q.Verify(m); err != nil {
			return err
		}
		// KV bytes move once. A target without state fragments copies whole
		// state items (the reference's rule); that is only right when they
		// are the same bytes again, which Execute checks.
		if m.Rewrites(false) > 0 && l.Attention == transferplan.MHA {
			return fmt.Errorf("decode rank %d: %d KV bytes written twice", p.DecodeTPRank, m.Rewrites(false))
		}
	}
	return nil
}

// placements describes a layout's buffers to kvsim. MLA ranks hold whole
// latent caches. A buffer whose items are not whole token rows is labelled
// flat (one row per page) and reported in flat: only whole-item copies of
// it can be right.
func placements(l Layout, bufs []BufferSpec, rows, keyOffset int) ([]kvsim.Placement, []bool, error) {
	out, flat := make([]kvsim.Placement, len(bufs)), make([]bool, len(bufs))
	for i, b := range bufs {
		kb := kvsim.Buffer{Key: 2*i + keyOffset, Rows: rows, Whole: l.Attention == transferplan.MLA,
			Prefill: kvsim.Side{TP: l.Prefill.TPPerDP(), ItemBytes: b.PrefillItemBytes, UnitBytes: b.PrefillUnitBytes},
			Decode:  kvsim.Side{TP: l.Decode.TPPerDP(), ItemBytes: b.DecodeItemBytes, UnitBytes: b.DecodeUnitBytes}}
		pl, err := kb.Place()
		if errors.Is(err, kvsim.ErrNotRowAligned) {
			kb.Rows, flat[i] = 1, true
			pl, err = kb.Place()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the planner accepted a layout engines cannot have: %w", err)
		}
		out[i] = pl
	}
	return out, flat, nil
}

// checkFlatWhole: a buffer without token rows may only move as whole items.
func checkFlatWhole(p transferplan.RoutePlan, l Layout, flatKV, flatState []bool) error {
	for _, tg := range p.Targets {
		for _, f := range tg.Fragments {
			flat := flatKV
			if f.BufferKind == transferplan.MambaState {
				flat = flatState
			}
			if f.BufferIndex >= 0 && f.BufferIndex < len(flat) && flat[f.BufferIndex] && !wholeItem(f) {
				return fmt.Errorf("fragment %+v takes part of a %d-token page whose item is not whole token rows", f, l.TokensPerPage)
			}
		}
	}
	return nil
}

func sampleRanks(rng *rand.Rand, plans []transferplan.RoutePlan, n int) []transferplan.RoutePlan {
	if len(plans) <= n {
		return plans
	}
	out := []transferplan.RoutePlan{plans[0], plans[len(plans)-1]}
	for len(out) < n {
		out = append(out, plans[1+rng.IntN(len(plans)-2)])
	}
	return out
}

func simTarget(tg transferplan.PlanTarget) kvsim.Target {
	t := kvsim.Target{PrefillRank: tg.PrefillTPRank, Dummy: tg.IsDummy, Fragments: make([]kvsim.Fragment, len(tg.Fragments))}
	for i, f := range tg.Fragments {
		t.Fragments[i] = kvsim.Fragment{State: f.BufferKind == transferplan.MambaState, Index: f.BufferIndex,
			SrcStride: f.SrcPageStrideBytes, DstStride: f.DstPageStrideBytes,
			SrcOffset: f.SrcByteOffset, DstOffset: f.DstByteOffset, Bytes: f.BytesPerPage}
	}
	return t
}

// wholeItem reports whether the fragment copies whole items on both sides, so
// that it stays contiguous whatever the page's internal layout.
func wholeItem(f transferplan.TransferFragment) bool {
	return f.SrcByteOffset == 0 && f.DstByteOffset == 0 &&
		f.BytesPerPage == f.SrcPageStrideBytes && f.BytesPerPage == f.DstPageStrideBytes
}
