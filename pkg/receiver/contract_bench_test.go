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
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// contractBenchScenario is the contract counterpart of benchScenario: GQA
// P4→D2 (tokenspeed's contracts), decode rank 0's agent, two sources per
// room as for the v1 benchmark's P8→D4 rank 0, the engine's own manifest.
func contractBenchScenario(b *testing.B) (*receiver.Manager, string, []byte) {
	b.Helper()
	pair := fixtures.LoadContractPair(b, "gqa-p4-d2")
	peer := receivertest.StartContractPeer(b, pair, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap, err := receiver.SnapshotFor(pair.Plan(b), 0)
	if err != nil {
		b.Fatal(err)
	}
	m, _ := receivertest.StartAgent(b, &snap, 0, func(c *receiver.Config) { c.Metrics = nil })
	if err := m.RegisterEngine(receivertest.ContractEngine(pair, 0)); err != nil {
		b.Fatal(err)
	}
	return m, peer.BootstrapAddr(), pair.Manifests[len(pair.Manifests)-1]
}

// contractRoom is one whole room of the contract wire through the Go API.
func contractRoom(m *receiver.Manager, addr string, manifest []byte) func(int64) (time.Duration, error) {
	return roomWith(m, addr, receiver.TransferRequest{Manifest: manifest})
}

// BenchmarkRoomsDirectContract is BenchmarkRoomsDirect on the
// cache-contract wire.
func BenchmarkRoomsDirectContract(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	m, addr, manifest := contractBenchScenario(b)
	measureRooms(b, 2000, contractRoom(m, addr, manifest))
}

// BenchmarkRoomsMemoryContract is BenchmarkRoomsMemory on the
// cache-contract wire.
func BenchmarkRoomsMemoryContract(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	m, addr, manifest := contractBenchScenario(b)
	d := &roomDriver{}
	heap := func() float64 {
		d.latencies = nil
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	for range b.N {
		d.run(10_000, contractRoom(m, addr, manifest))
		at10k := heap()
		d.run(990_000, contractRoom(m, addr, manifest))
		at1M := heap()
		b.ReportMetric(at10k, "heapMiB@10k")
		b.ReportMetric(at1M, "heapMiB@1M")
		b.ReportMetric(float64(m.OpenRooms()), "open-rooms-after")
	}
	if f := d.failures.Load(); f > 0 {
		b.Fatalf("%d rooms failed", f)
	}
}
