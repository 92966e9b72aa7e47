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

package agentclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// BenchmarkRoomsClient runs whole rooms through the Go client against a
// real agent (its local API on a unix socket) and the prefill peer, P8→D4
// fragmented, decode rank 0, BENCH_INFLIGHT rooms in flight (default 32):
//   - client: Open, Room until it left Bootstrapping, Request, Wait (one
//     long poll), Clear;
//   - receiver: the reference calling order through Manager and Receiver,
//     polling every 100µs as a scheduler loop would.
//
// BenchmarkSchedulerLoop is one engine rank in the reference decode
// scheduler's calling order, over the rank's stream: keep BENCH_INFLIGHT
// (256) receivers open; every iteration poll each once, Prefill the
// Bootstrapped ones, read the token of and Clear the Successful ones, then
// sleep BENCH_STEP (100µs; 0 spins) as a forward pass would. It reports
// rooms/s and the process's heap in use before and after the run (agent,
// peer and client share the process).
func BenchmarkSchedulerLoop(b *testing.B) {
	inflight := 256
	if v, err := strconv.Atoi(os.Getenv("BENCH_INFLIGHT")); err == nil && v > 0 {
		inflight = v
	}
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(b, l, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap := receivertest.Snapshot(b, l, 0)
	m, _ := receivertest.StartAgent(b, &snap, 0, func(c *receiver.Config) { c.Metrics = nil })
	path := agentclient.SocketPath(b.TempDir(), 0)
	serveUnix(b, m, path)
	c := agentclient.New(path, agentclient.Options{})
	b.Cleanup(c.Close)
	mgr, err := agentclient.NewManager(context.Background(), c, receivertest.Engine(snap, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(mgr.Close)
	ctx := context.Background()
	step := 100 * time.Microsecond // the scheduler's forward pass between sweeps
	if v, err := time.ParseDuration(os.Getenv("BENCH_STEP")); err == nil {
		step = v
	}
	run := func(n int, first int64) (done int, err error) {
		type pending struct {
			rc        *agentclient.Receiver
			requested bool
		}
		open := make([]pending, 0, inflight)
		next := first
		req := agentclient.Request{KVIndices: []int64{1, 2, 3}}
		for done < n {
			for len(open) < inflight && next-first < int64(n) {
				open = append(open, pending{rc: mgr.NewReceiver(ctx, peer.BootstrapAddr(), next)})
				next++
			}
			for i := 0; i < len(open); i++ {
				p := &open[i]
				switch p.rc.Poll(ctx) {
				case receiver.Bootstrapped:
					if !p.requested {
						req.AuxIndex = p.rc.BootstrapRoom() % 512
						p.rc.Prefill(ctx, req)
						p.requested = true
					}
				case receiver.Success:
					_ = p.rc.BootstrapToken()
					_ = p.rc.Clear(ctx)
					open[i] = open[len(open)-1]
					open = open[:len(open)-1]
					i--
					done++
				case receiver.Failed:
					return done, p.rc.Failure(ctx)
				}
			}
			if step > 0 { // the scheduler's own pace, which the benchmark measures: not a wait
				time.Sleep(step)
			} else {
				runtime.Gosched()
			}
		}
		return done, nil
	}
	if _, err := run(2000, 1<<40); err != nil { // warm: connections, the prefill's addresses
		b.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuBefore := processCPU(b)
	b.ResetTimer()
	start := time.Now()
	done, err := run(b.N, 0)
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := processCPU(b) - cpuBefore
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(done)/elapsed.Seconds(), "rooms/s")
	// CPU per room, agent, peer and client together: what a loaded machine
	// does not change, unlike rooms/s.
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(done, 1)), "cpu-µs/room")
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB-after")
	b.ReportMetric(float64(before.HeapInuse)/(1<<20), "heap-MiB-before")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkRoomsClient(b *testing.B) {
	for _, mode := range []string{"client", "receiver"} {
		b.Run(mode, func(b *testing.B) { benchRooms(b, mode == "receiver") })
	}
}

func benchRooms(b *testing.B, reference bool) {
	inflight := 32
	if v, err := strconv.Atoi(os.Getenv("BENCH_INFLIGHT")); err == nil && v > 0 {
		inflight = v
	}
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(b, l, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap := receivertest.Snapshot(b, l, 0)
	m, _ := receivertest.StartAgent(b, &snap, 0, nil)
	path := agentclient.SocketPath(b.TempDir(), 0)
	serveUnix(b, m, path)
	c := agentclient.New(path, agentclient.Options{MaxIdleConns: inflight})
	b.Cleanup(c.Close)
	mgr, err := agentclient.NewManager(context.Background(), c, receivertest.Engine(snap, 0))
	if err != nil {
		b.Fatal(err)
	}
	run := func(n int, first int64) ([]time.Duration, error) {
		var (
			next    atomic.Int64
			mu      sync.Mutex
			lat     = make([]time.Duration, 0, n)
			firstEr error
			wg      sync.WaitGroup
		)
		for range inflight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
					start := time.Now()
					var err error
					if reference {
						err = referenceRoom(mgr, peer.BootstrapAddr(), first+i)
					} else {
						err = clientRoom(c, peer.BootstrapAddr(), first+i)
					}
					mu.Lock()
					if err != nil && firstEr == nil {
						firstEr = err
					}
					lat = append(lat, time.Since(start))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return lat, firstEr
	}
	if _, err := run(500, 1<<40); err != nil { // warm: connections, the prefill's addresses
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	lat, err := run(b.N, 0)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "rooms/s")
	b.ReportMetric(pct(0.5), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

func serveUnix(b *testing.B, m *receiver.Manager, path string) {
	r := &rig{socket: path, accepted: new(atomic.Int64)}
	r.serve(b, m)
}

// clientRoom runs a room through the client's calls.
func clientRoom(c *agentclient.Client, addr string, room int64) error {
	ctx := context.Background()
	got, err := c.Open(ctx, addr, room)
	if err == nil && got.Status == receiver.Bootstrapping {
		err = poll.Until(time.Minute, func() error { // every 100µs, a pace the room's latency includes
			if got, err = c.Room(ctx, room); err != nil {
				return poll.Stop(err)
			}
			if got.Status == receiver.Bootstrapping {
				return errors.New("still Bootstrapping")
			}
			return nil
		}, poll.Every(100*time.Microsecond))
	}
	if err == nil {
		_, err = c.Request(ctx, room, agentclient.Request{KVIndices: []int64{1, 2, 3}, AuxIndex: room % 512})
	}
	if err == nil {
		got, err = c.Wait(ctx, room, 30*time.Second)
	}
	if err == nil && got.Status != receiver.Success {
		err = fmt.Errorf("room %d: %v %s: %s", room, got.Status, got.FailureCode, got.FailureMessage)
	}
	if err != nil {
		return err
	}
	return c.Clear(ctx, room)
}

// referenceRoom runs a room in the reference decode's calling order.
func referenceRoom(mgr *agentclient.Manager, addr string, room int64) error {
	ctx := context.Background()
	rc := mgr.NewReceiver(ctx, addr, room)
	// The engine polls every 100µs, a pace the room's latency includes.
	var st receiver.TransferPoll
	until := func(done func(receiver.TransferPoll) bool) error {
		return poll.Until(time.Minute, func() error {
			if st = rc.Poll(ctx); !done(st) {
				return fmt.Errorf("room %d %v", room, st)
			}
			return nil
		}, poll.Every(100*time.Microsecond))
	}
	if err := until(func(st receiver.TransferPoll) bool { return st != receiver.Bootstrapping }); err != nil {
		return err
	}
	if st == receiver.Bootstrapped {
		rc.Prefill(ctx, agentclient.Request{KVIndices: []int64{1, 2, 3}, AuxIndex: room % 512})
		if err := until(receiver.TransferPoll.Finished); err != nil {
			return err
		}
	}
	if st != receiver.Success {
		return rc.Failure(ctx)
	}
	return rc.Clear(ctx)
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
