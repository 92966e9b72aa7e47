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
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// benchInFlight is how many rooms the benchmark keeps open at once, as an
// engine does with a batch of requests in prefill.
var benchInFlight = envInt("BENCH_INFLIGHT", 128)

// benchScenario is the P8→D4 fragmented pair with decode rank 0's agent
// (two prefill targets per room), the peer keeping no per-request records.
func benchScenario(b *testing.B) (*receiver.Manager, string) {
	b.Helper()
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(b, l, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap := receivertest.Snapshot(b, l, 0)
	m, _ := receivertest.StartAgent(b, &snap, 0, func(c *receiver.Config) { c.Metrics = nil })
	if err := m.RegisterEngine(receivertest.Engine(snap, 0)); err != nil {
		b.Fatal(err)
	}
	return m, peer.BootstrapAddr()
}

// roomDriver runs whole rooms (open → request → success → clear) from
// benchInFlight goroutines and records each open-to-success latency.
type roomDriver struct {
	next      atomic.Int64
	mu        sync.Mutex
	latencies []time.Duration
	failures  atomic.Int64
}

// run completes n rooms with room, which returns the open-to-success time.
func (d *roomDriver) run(n int, room func(id int64) (time.Duration, error)) {
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	for range benchInFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, n/benchInFlight+1)
			for left.Add(-1) >= 0 {
				lat, err := room(d.next.Add(1))
				if err != nil {
					d.failures.Add(1)
					continue
				}
				local = append(local, lat)
			}
			d.mu.Lock()
			d.latencies = append(d.latencies, local...)
			d.mu.Unlock()
		}()
	}
	wg.Wait()
}

func (d *roomDriver) report(b *testing.B, elapsed time.Duration) {
	if f := d.failures.Load(); f > 0 {
		b.Fatalf("%d rooms failed", f)
	}
	slices.Sort(d.latencies)
	pct := func(p float64) float64 {
		if len(d.latencies) == 0 {
			return 0
		}
		return float64(d.latencies[int(p*float64(len(d.latencies)-1))].Microseconds())
	}
	b.ReportMetric(float64(len(d.latencies))/elapsed.Seconds(), "rooms/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// measureRooms warms the agent with warmup rooms (connections,
// registration, caches), then times b.N rooms and reports them.
func measureRooms(b *testing.B, warmup int, room func(int64) (time.Duration, error)) {
	warm := &roomDriver{}
	warm.run(warmup, room)
	d := &roomDriver{}
	d.next.Store(1 << 40)
	b.ResetTimer()
	start := time.Now()
	d.run(b.N, room)
	d.report(b, time.Since(start))
}

// directRoom is one whole room through the Manager's Go API.
func directRoom(m *receiver.Manager, addr string) func(int64) (time.Duration, error) {
	return roomWith(m, addr, receiver.TransferRequest{KVIndices: []int64{1, 2, 3, 4, 5, 6, 7, 8}, AuxIndex: 1})
}

// roomWith is one whole room through the Manager's Go API, with req.
func roomWith(m *receiver.Manager, addr string, req receiver.TransferRequest) func(int64) (time.Duration, error) {
	return func(id int64) (time.Duration, error) {
		start := time.Now()
		if err := m.Open(addr, id); err != nil {
			return 0, err
		}
		if err := waitLeftBootstrapping(m, id); err != nil {
			return 0, err
		}
		if err := m.Request(id, req); err != nil {
			return 0, err
		}
		st, err := m.Wait(context.Background(), id)
		lat := time.Since(start)
		if err == nil && st.Status != receiver.Success {
			err = st.Failure
		}
		if cerr := m.Clear(id); err == nil {
			err = cerr
		}
		return lat, err
	}
}

// waitLeftBootstrapping covers the first rooms, which wait for the
// bootstrap server; later ones are bootstrapped when Open returns. It polls
// every 100µs, a pace the rooms' latency includes.
func waitLeftBootstrapping(m *receiver.Manager, id int64) error {
	return poll.Until(time.Minute, func() error {
		st, err := m.Status(id)
		switch {
		case err != nil:
			return poll.Stop(err)
		case st.Status >= receiver.Bootstrapped:
			return nil
		case st.Status == receiver.Failed:
			return poll.Stop(st.Failure)
		}
		return fmt.Errorf("room %d %v", id, st.Status)
	}, poll.Every(100*time.Microsecond))
}

// BenchmarkRoomsDirect: whole rooms through pkg/receiver against the peer.
func BenchmarkRoomsDirect(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	m, addr := benchScenario(b)
	measureRooms(b, 2000, directRoom(m, addr))
}

// BenchmarkRoomsMemory reports heap in use after 10k and after 1M rooms:
// cleared rooms must leave nothing behind.
func BenchmarkRoomsMemory(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	m, addr := benchScenario(b)
	d := &roomDriver{}
	heap := func() float64 {
		d.latencies = nil // the benchmark's own records are not the agent's memory
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	for range b.N {
		d.run(10_000, directRoom(m, addr))
		at10k := heap()
		d.run(990_000, directRoom(m, addr))
		at1M := heap()
		b.ReportMetric(at10k, "heapMiB@10k")
		b.ReportMetric(at1M, "heapMiB@1M")
		b.ReportMetric(float64(m.OpenRooms()), "open-rooms-after")
	}
	if f := d.failures.Load(); f > 0 {
		b.Fatalf("%d rooms failed", f)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
