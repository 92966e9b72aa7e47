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

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// flood is one run of three floods at once against an agent process with
// two ranks and a memory limit: rank 0's engine opens rooms and never
// clears them until the agent refuses more; a sender pushes forged status
// messages (64 KiB each, the largest the socket takes) at rank 0 as fast
// as it can from another host; and idleConns connections to the probe
// address are opened and held. Meanwhile rank 1 runs rooms end to end.
type flood struct {
	memoryLimit string
	limitBytes  int64
	idleConns   int
	rank1Rooms  int
	statusFor   time.Duration
}

// floodResult is what a flood measured.
type floodResult struct {
	peakRSS        int64 // the agent process's VmHWM, bytes
	roomsOpened    int64 // by rank 0 before TooManyRooms
	refusal        string
	statusesSent   int64
	idleOpened     int64
	probeRefused   string
	rank1PerSecond float64
}

func (f flood) run(tb testing.TB) floodResult {
	tb.Helper()
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(tb, l, nil)
	dir := tb.TempDir()
	objects, _ := receivertest.Publish(tb, "pair", l)
	receivertest.ProjectPlans(tb, dir, 1, objects)
	a, cmd := startAgentProcess(tb, tb.TempDir(), 0, 2, "--plan-dir", dir, "--memory-limit", f.memoryLimit)
	for r := range 2 {
		if err := a.rank(r).RegisterEngine(tb.Context(), receivertest.Engine(receivertest.Snapshot(tb, l, r), r)); err != nil {
			tb.Fatalf("registering engine rank %d: %v", r, err)
		}
	}
	statusEP := "tcp://" + a.log.findWhere(tb, "engine API listening", func(rec map[string]any) bool { return rec["engineRank"] == float64(0) })["statusAddr"].(string)
	var res floodResult
	var wg sync.WaitGroup
	wg.Go(func() { res.roomsOpened, res.refusal = floodRooms(tb, a.rank(0), peer.BootstrapAddr()) })
	wg.Go(func() { res.statusesSent = floodStatus(tb, statusEP, f.statusFor) })
	var release func()
	wg.Go(func() { res.idleOpened, release = holdIdle(tb, a.probe, f.idleConns) })

	start := time.Now()
	for room := range int64(f.rank1Rooms) {
		if got := roomThroughAPI(tb, a.rank(1), peer.BootstrapAddr(), 1<<40+room); got.Status != receiver.Success {
			tb.Fatalf("engine rank 1's room %d during the flood: %+v", room, got)
		}
	}
	res.rank1PerSecond = float64(f.rank1Rooms) / time.Since(start).Seconds()
	wg.Wait()
	release()
	res.peakRSS = peakRSS(tb, cmd.Process.Pid)
	res.probeRefused = a.metric(tb, "pdtopo_receiver_probe_connections_refused_total")
	if res.peakRSS >= f.limitBytes {
		tb.Fatalf("the agent's peak RSS was %d MiB, over its %s limit", res.peakRSS>>20, f.memoryLimit)
	}
	return res
}

// floodRooms opens rooms on one rank from 8 goroutines until it refuses
// with TooManyRooms, and returns how many it opened and the refusal.
func floodRooms(tb testing.TB, c *agentclient.Client, bootstrap string) (int64, string) {
	var opened, next atomic.Int64
	var full atomic.Bool
	var refusal atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for !full.Load() {
				_, err := c.Open(tb.Context(), bootstrap, next.Add(1))
				var ae *agentclient.APIError
				switch {
				case err == nil:
					opened.Add(1)
				case errors.As(err, &ae) && ae.Code == string(receiver.CodeTooManyRooms):
					refusal.CompareAndSwap(nil, ae.Message)
					full.Store(true)
				default:
					tb.Errorf("opening a room: %v", err)
					full.Store(true)
				}
			}
		})
	}
	wg.Wait()
	msg, _ := refusal.Load().(string)
	return opened.Load(), msg
}

// floodStatus pushes forged 64 KiB status messages for rooms 1..1000 from
// 127.0.0.2 as fast as the socket takes them, for d; it returns how many
// it handed to the socket.
func floodStatus(tb testing.TB, endpoint string, d time.Duration) int64 {
	sock, err := zmqsock.ConnectPush(nil, "tcp://127.0.0.2:0;"+strings.TrimPrefix(endpoint, "tcp://"), zmqsock.SendTimeout(10*time.Millisecond))
	if err != nil {
		tb.Errorf("status flood: %v", err)
		return 0
	}
	defer sock.Close()
	candidates := make([]byte, receiver.MaxStatusMessage-64)
	var sent int64
	for end := time.Now().Add(d); time.Now().Before(end); {
		st := kvwire.Status{Room: 1 + sent%1000, State: kvwire.Success, PrefillTPRank: int(sent % 2), BootstrapToken: 1}
		frames := st.Frames()
		frames = append(frames[:4], candidates)
		if _, err := sock.SendMessage(frames); err == nil {
			sent++
		} else if !zmqsock.WouldBlock(err) {
			tb.Errorf("status flood: %v", err)
			return sent
		}
	}
	return sent
}

// holdIdleEnv makes the test binary hold idle connections instead of
// running tests ("ADDR N"): one process may hold fewer descriptors than a
// flood needs, so the flood runs several.
const holdIdleEnv = "PDTOPO_TEST_HOLD_IDLE"

// holdIdleMain opens N connections to ADDR, sending nothing, prints how
// many it opened, and holds them until its standard input closes.
func holdIdleMain(spec string) {
	addr, count, _ := strings.Cut(spec, " ")
	n, _ := strconv.Atoi(count)
	conns := make([]net.Conn, 0, n)
	for len(conns) < n {
		var c net.Conn
		if poll.Until(10*time.Second, func() error { // backlog full: try again
			var err error
			c, err = net.DialTimeout("tcp", addr, time.Second)
			return err
		}, poll.Every(time.Millisecond)) != nil {
			break // the agent stopped accepting: report how many it took
		}
		conns = append(conns, c)
	}
	fmt.Println(len(conns))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// holdIdle has helper processes of 9,000 connections each open n idle
// connections to the probe address; it returns how many they opened and a
// function that closes them all.
func holdIdle(tb testing.TB, probeURL string, n int) (opened int64, release func()) {
	addr := strings.TrimPrefix(probeURL, "http://")
	var stdins []io.WriteCloser
	var cmds []*exec.Cmd
	var outs []*bufio.Reader
	for left := n; left > 0; left -= 9000 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), holdIdleEnv+"="+addr+" "+strconv.Itoa(min(left, 9000)))
		in, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		stdins, cmds, outs = append(stdins, in), append(cmds, cmd), append(outs, bufio.NewReader(out))
	}
	for _, out := range outs {
		line, _ := out.ReadString('\n')
		k, _ := strconv.Atoi(strings.TrimSpace(line))
		opened += int64(k)
	}
	return opened, func() {
		for i, in := range stdins {
			in.Close()
			_ = cmds[i].Wait()
		}
	}
}

// peakRSS reads a process's peak resident set (VmHWM).
func peakRSS(tb testing.TB, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// An agent given 128 MiB, flooded three ways at once, stays under its
// limit, refuses rooms past its budget, and its other rank keeps
// completing rooms (the full-size run, 512 MiB and 20,000 idle
// connections, is BenchmarkAgentUnderFlood).
func TestAgentUnderFloodStaysInItsBudget(t *testing.T) {
	res := flood{memoryLimit: "128Mi", limitBytes: 128 << 20, idleConns: 2000, rank1Rooms: 200, statusFor: 3 * time.Second}.run(t)
	// Go limit 128 - 32 - 2 × 6 = 84 MiB; (84 - 16) MiB / 2 / 2 ranks / 512 B
	if res.roomsOpened != 34816 || !strings.Contains(res.refusal, "34816 rooms are open on engine rank 0, the most it keeps") {
		t.Fatalf("rank 0 opened %d rooms before %q, want 34816 and a refusal saying so", res.roomsOpened, res.refusal)
	}
	if res.statusesSent == 0 || res.probeRefused == "" || res.probeRefused == "0" {
		t.Fatalf("the floods did not reach the agent: %+v", res)
	}
	t.Logf("peak RSS %d MiB; %d rooms open on rank 0; %d forged statuses; %d idle probe connections opened, %s refused; rank 1 %.0f rooms/s",
		res.peakRSS>>20, res.roomsOpened, res.statusesSent, res.idleOpened, res.probeRefused, res.rank1PerSecond)
}

// BenchmarkAgentUnderFlood: the agent as the injected sidecar runs it (512
// MiB), two ranks, flooded three ways at once (rooms on rank 0 until it
// refuses, 10 s of forged 64 KiB statuses, 20,000 idle probe connections)
// while rank 1 runs 1,000 rooms. Reports the agent's peak RSS.
func BenchmarkAgentUnderFlood(b *testing.B) {
	for range b.N {
		res := flood{memoryLimit: "512Mi", limitBytes: 512 << 20, idleConns: 20_000, rank1Rooms: 1000, statusFor: 10 * time.Second}.run(b)
		b.ReportMetric(float64(res.peakRSS)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(res.roomsOpened), "rank0-rooms-open")
		b.ReportMetric(float64(res.statusesSent), "forged-statuses")
		b.ReportMetric(float64(res.idleOpened), "idle-conns")
		b.ReportMetric(res.rank1PerSecond, "rank1-rooms/s")
		b.ReportMetric(0, "ns/op")
	}
}
