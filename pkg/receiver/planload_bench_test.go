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

package receiver_test

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// BenchmarkLoadRankPlan is what an agent does when a plan is published:
// read decode rank 0's plan out of the published ConfigMap objects
// (planstore: verify the index, gunzip, SHA-256, strict JSON decode) and
// install it (receiver: check it, encode its fragment frames once). A GQA
// pair of 80 layers (K and V), prefill TP16 → decode TP8, 256-byte heads:
// with 16 KV heads at 64 tokens per page decode rank 0 has 2 × 160 × 64 =
// 20,480 fragments; ns/fragment should stay flat as the count grows.
func BenchmarkLoadRankPlan(b *testing.B) {
	for _, c := range []struct{ heads, tokens int }{{8, 64}, {16, 1}, {16, 64}} {
		l := fixtures.MHA(16, 8, fixtures.Buffers(80,
			int64(c.tokens*max(1, c.heads/16)*256), int64(c.tokens*c.heads/8*256), 256))
		l.TokensPerPage = c.tokens
		b.Run(fmt.Sprintf("%dheads/%dtokens", c.heads, c.tokens), func(b *testing.B) {
			set, err := planv1.Plan(l)
			if err != nil {
				b.Fatal(err)
			}
			objs, err := planstore.Encode("bench", set)
			if err != nil {
				b.Fatal(err)
			}
			snap := receivertest.Snapshot(b, l, 0)
			m, _ := receivertest.StartAgent(b, &snap, 0, func(c *receiver.Config) { c.Metrics = nil })
			fragments := snap.Plan.FragmentCount()
			b.ReportAllocs()
			for b.Loop() {
				plan, layout, hash, err := planstore.LoadRank(objs, 0)
				if err != nil {
					b.Fatal(err)
				}
				if err := m.SetPlan(receiver.PlanSnapshot{Layout: layout, Plan: plan, Hash: hash}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fragments), "fragments")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(fragments), "ns/fragment")
		})
	}
}

// BenchmarkRoomsTokenRowPlan: whole rooms, as BenchmarkRoomsDirect, for
// decode rank 0 of the GQA P16→D8 pair with 16 KV heads at 64 tokens per
// page: each room's two requests carry 10,240 token-row fragments each
// (about 2.2 MB of fragment JSON, encoded once when the plan is loaded).
func BenchmarkRoomsTokenRowPlan(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	l := fixtures.MHA(16, 8, fixtures.Buffers(80, 64*256, 64*2*256, 256))
	l.TokensPerPage = 64
	peer := receivertest.StartPeer(b, l, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap := receivertest.Snapshot(b, l, 0)
	m, _ := receivertest.StartAgent(b, &snap, 0, func(c *receiver.Config) { c.Metrics = nil })
	if err := m.RegisterEngine(receivertest.Engine(snap, 0)); err != nil {
		b.Fatal(err)
	}
	addr := peer.BootstrapAddr()
	measureRooms(b, 100, directRoom(m, addr))
	b.ReportMetric(float64(snap.Plan.FragmentCount()), "fragments")
}
