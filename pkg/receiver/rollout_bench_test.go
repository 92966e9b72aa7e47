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
	"runtime/debug"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// BenchmarkRoomsDirectTwoSets is BenchmarkRoomsDirect during a prefill
// rollout: decode rank 0 holds the P4 set (current) and the P8 set, and
// every room goes to the P8 prefill, so each one finds its address's set
// (BenchmarkRoomsDirect holds one set and skips the lookup).
func BenchmarkRoomsDirectTwoSets(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	old, cur := fixtures.FragmentedP8D4(), fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128))
	peer := receivertest.StartPeer(b, old, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	curSnap, oldSnap := receivertest.Snapshot(b, cur, 0), receivertest.Snapshot(b, old, 0)
	m, _ := receivertest.StartAgent(b, &curSnap, 0, func(c *receiver.Config) { c.Metrics = nil })
	if err := receiver.InstallPlanSets([]*receiver.Manager{m}, [][]receiver.PlanSnapshot{{curSnap}, {oldSnap}}); err != nil {
		b.Fatal(err)
	}
	if err := m.RegisterEngine(receivertest.Engine(curSnap, 0)); err != nil {
		b.Fatal(err)
	}
	addr := peer.BootstrapAddr()
	measureRooms(b, 2000, directRoom(m, addr))
}
