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
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// closedByServer reports whether the server closed c within wait: a read
// sees EOF (or a reset) rather than its deadline.
func closedByServer(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// The probe address is on the pod IP, reachable by anything in the
// cluster. Idle connections there cost the agent a goroutine and buffers
// each: it holds at most probeMaxConns, closes the rest as they arrive
// (counting them), and closes a connection that sends no request within
// probeHeaderTimeout (within 10 s). Once the idle ones are gone, probes answer again.
func TestProbeHoldsFewConnectionsAndNoneForLong(t *testing.T) {
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 1, "--plan-dir", dir)
	addr := strings.TrimPrefix(a.probe, "http://")
	http.DefaultClient.CloseIdleConnections() // the harness's own keep-alive connections
	time.Sleep(100 * time.Millisecond)

	idle := make([]net.Conn, 0, probeMaxConns)
	for range probeMaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	opened := time.Now()
	for i := range 5 {
		extra, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if !closedByServer(extra, time.Second) {
			t.Fatalf("connection %d past the %d held was kept open", probeMaxConns+i+1, probeMaxConns)
		}
		extra.Close()
	}
	for i, c := range idle {
		if !closedByServer(c, 10*time.Second-time.Since(opened)) {
			t.Fatalf("idle connection %d was still open %v after it was opened", i, time.Since(opened))
		}
	}
	call(t, http.DefaultClient, "GET", a.probe+"/healthz", "", 200)
	if v := a.metric(t, "pdtopo_receiver_probe_connections_refused_total"); v != "5" {
		t.Fatalf("pdtopo_receiver_probe_connections_refused_total %q, want 5", v)
	}
}

// Every timeout of the probe server is set, and a kept-alive connection is
// closed after at most a minute of silence.
func TestProbeServerTimeouts(t *testing.T) {
	s := probeServer(nil)
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 || s.IdleTimeout > time.Minute || s.MaxHeaderBytes <= 0 {
		t.Fatalf("probe server: header %v, read %v, write %v, idle %v, max header %d bytes", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	}
}

// The Go memory limit follows --memory-limit (as it follows the
// container's cgroup limit): go_gc_gomemlimit_bytes shows it, the agent's
// log names the budget, and the room table is sized from it.
func TestMemoryLimitSizesTheAgent(t *testing.T) {
	dir := t.TempDir()
	l := fixtures.FragmentedP8D4()
	objects, _ := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	peer := startPeer(t, l)
	// 4 MiB: Go heap 3 MiB, 3 MiB / 2 / 2 ranks / 512 B = 1536 rooms per rank
	a := startAgent(t, 0, 2, "--plan-dir", dir, "--memory-limit", "4Mi")
	if v := a.metric(t, "go_gc_gomemlimit_bytes"); v != "3.145728e+06" {
		t.Fatalf("go_gc_gomemlimit_bytes %q, want 3 MiB (3/4 of 4 MiB)", v)
	}
	if rec := a.log.find(t, "memory budget"); rec["from"] != "--memory-limit" || rec["maxRoomsPerRank"] != float64(1536) {
		t.Fatalf("budget log line %v", rec)
	}
	register(t, a.rank(1), l, 1)
	for room := range int64(1536) {
		if _, err := a.rank(1).Open(t.Context(), peer.BootstrapAddr(), room); err != nil {
			t.Fatalf("room %d of 1536: %v", room, err)
		}
	}
	_, err := a.rank(1).Open(t.Context(), peer.BootstrapAddr(), 1536)
	ae := refused(t, err, 503, "TooManyRooms")
	if !strings.Contains(ae.Message, "1536 rooms are open on engine rank 1, the most it keeps") {
		t.Fatalf("refusal %q does not say how many rooms and which rank", ae.Message)
	}
	register(t, a.rank(0), l, 0) // another rank's table is its own
	if got := roomThroughAPI(t, a.rank(0), peer.BootstrapAddr(), 1); got.Status != receiver.Success {
		t.Fatalf("engine rank 0's room while rank 1 is full: %+v", got)
	}
}
