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
	"fmt"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// Scenario tests drive the peer with a whole decode fleet that follows the
// planner's route plans, as receiver agents would: the planner's fragments
// must pass every prefill rank's own layout checks, and every decode rank
// must get exactly its required responses.

func buffers(kind transferplan.BufferKind, n int, prefillItem, decodeItem, unit int64) []planv1.BufferSpec {
	out := make([]planv1.BufferSpec, n)
	for i := range out {
		out[i] = planv1.BufferSpec{Kind: kind, PrefillItemBytes: prefillItem, DecodeItemBytes: decodeItem, PrefillUnitBytes: unit, DecodeUnitBytes: unit}
	}
	return out
}

func kvPair(n int, prefillItem, decodeItem, unit int64) []planv1.BufferSpec {
	return append(buffers(transferplan.TargetK, n, prefillItem, decodeItem, unit), buffers(transferplan.TargetV, n, prefillItem, decodeItem, unit)...)
}

func layout(attn transferplan.AttentionBackend, p, pdp, d int, kv []planv1.BufferSpec) planv1.Layout {
	return planv1.Layout{Attention: attn, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: p, DPSize: pdp}, Decode: transferplan.Parallelism{TPSize: d, DPSize: 1}, KVBuffers: kv}
}

func TestPlannedFleets(t *testing.T) {
	mlaL15 := layout(transferplan.MLA, 2, 1, 2, buffers(transferplan.TargetK, 4, 576, 576, 576))
	mlaL15.MLAL15Cache = true
	withState := layout(transferplan.MHA, 4, 1, 2, kvPair(4, 256, 512, 256))
	withState.StateBuffers = buffers(transferplan.MambaState, 3, 1024, 2048, 64)
	cases := []struct {
		name string
		l    planv1.Layout
		kind transferplan.PlanKind
	}{
		{"identity P2-D2", layout(transferplan.MHA, 2, 1, 2, kvPair(4, 512, 512, 256)), transferplan.PlanIdentity},
		{"fragmented GQA P8-D4", layout(transferplan.MHA, 8, 1, 4, kvPair(80, 256, 512, 256)), transferplan.PlanFragmented},
		{"fragmented P2-D4", layout(transferplan.MHA, 2, 1, 4, kvPair(8, 1024, 512, 256)), transferplan.PlanFragmented},
		{"replicated GQA P4-D1 with idle ranks", layout(transferplan.MHA, 4, 1, 1, kvPair(4, 256, 256, 256)), transferplan.PlanFragmented},
		{"MLA P8-D2 with dummies", layout(transferplan.MLA, 8, 1, 2, buffers(transferplan.TargetK, 4, 576, 576, 576)), transferplan.PlanMLA},
		{"MLA P2-D4 shared sources", layout(transferplan.MLA, 2, 1, 4, buffers(transferplan.TargetK, 4, 576, 576, 576)), transferplan.PlanMLA},
		{"MLA L1.5 P2-D2", mlaL15, transferplan.PlanMLA},
		{"DP attention P4xDP2-D2", layout(transferplan.MHA, 4, 2, 2, kvPair(4, 512, 512, 256)), transferplan.PlanIdentity},
		{"state buffers P4-D2", withState, transferplan.PlanFragmented},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			planner, err := planv1.NewPlanner(c.l)
			if err != nil {
				t.Fatal(err)
			}
			if planner.Kind() != c.kind {
				t.Fatalf("plan kind %s, want %s", planner.Kind(), c.kind)
			}
			cfg := ConfigFor(c.l)
			cfg.Transfer = &c.l
			p := startPeer(t, cfg)
			runFleet(t, p, c.l, planner.RoutePlans(), []int64{10, 11, 12})
		})
	}
}

func decodeItemBytes(bufs []planv1.BufferSpec) int64 {
	var n int64
	for _, b := range bufs {
		n += b.DecodeItemBytes
	}
	return n
}

// runFleet plays every decode rank of plans through rooms and checks the
// outcome on both sides.
func runFleet(t *testing.T, p *Peer, l planv1.Layout, plans []transferplan.RoutePlan, rooms []int64) {
	t.Helper()
	fleet := make([]*decodeRank, len(plans))
	for d := range fleet {
		fleet[d] = newDecodeRank(t, fmt.Sprintf("127.0.0.1:%d", 15500+d))
	}
	registered := map[[2]int]bool{}
	for _, room := range rooms {
		group := int(room % int64(l.Prefill.DPSize))
		for d, plan := range plans {
			dr := fleet[d]
			send := func(tpRank int, q kvv1.Request) {
				r := p.RankOf(group, tpRank)
				if key := [2]int{d, r.EngineRank}; !registered[key] {
					registered[key] = true
					dr.register(r, len(l.KVBuffers), len(l.StateBuffers))
				}
				dr.sendRequest(r, q)
			}
			for _, tg := range plan.Targets {
				if tg.IsDummy {
					send(tg.PrefillTPRank, dr.dummy(room, tg.RequiredDstInfoNum))
					continue
				}
				q := dr.request(room, tg.RequiredDstInfoNum, tg.Fragments)
				if len(l.StateBuffers) > 0 {
					q.MambaIndices = []int64{int64(d)}
				}
				send(tg.PrefillTPRank, q)
			}
			for _, idle := range plan.IdlePrefillTPRanks {
				send(idle, dr.dummy(room, 1))
			}
		}
		for d, plan := range plans {
			for range plan.RequiredPrefillResponseNum {
				if s := fleet[d].recvStatus(answerWithin); s.Room != room || s.State != kvwire.Success {
					t.Fatalf("decode rank %d room %d: %+v", d, room, s)
				}
			}
			// Every byte of the decode rank's 3 pages (kv_indices 4, 5, 6) and
			// its state slot was written, once (each write was checked as it
			// was made). The peer does not model which pages an L1.5 rank
			// owns: each of them sends every page.
			want := 3*decodeItemBytes(l.KVBuffers) + decodeItemBytes(l.StateBuffers)
			if l.MLAL15Cache {
				want *= int64(l.Prefill.TPPerDP())
			}
			if got := p.TransferredBytes(room, fleet[d].session); got != want {
				t.Fatalf("decode rank %d room %d: the prefill ranks wrote %d bytes, want %d", d, room, got, want)
			}
		}
	}
	// Dummy-only rooms complete silently and asynchronously: the decode side
	// cannot wait for them, so poll the peer's counts for a while.
	want := int64(len(rooms) * l.Prefill.TPPerDP()) // idle ranks complete too
	var completed int64
	_ = poll.Until(answerWithin, func() error { // more completions than want fail below too
		completed = 0
		for _, r := range p.Ranks() {
			if errs := r.Errors(); len(errs) > 0 {
				t.Fatalf("prefill engine rank %d: %v", r.EngineRank, errs)
			}
			completed += r.Counts().RoomsCompleted
		}
		return errUnless(completed >= want)
	})
	if completed != want {
		t.Fatalf("%d room completions over all prefill ranks, want %d", completed, want)
	}
	for _, dr := range fleet {
		dr.expectSilence(silenceFor)
	}
}
