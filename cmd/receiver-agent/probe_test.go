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
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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
	// One pause for the closes to reach the agent, which counts no
	// connections a test could poll.
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
// container's cgroup limit): go_gc_gomemlimit_bytes shows it and the
// agent's log names the budget. A limit too small for the agent is refused
// at start. (The room limit it derives is held in the flood test.)
func TestMemoryLimitSizesTheAgent(t *testing.T) {
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	receivertest.ProjectPlans(t, dir, 1, objects)
	// 96 MiB less the 32 MiB reserve less 4 MiB for each kind of queue
	a := startAgent(t, 0, 2, "--plan-dir", dir, "--memory-limit", "96Mi")
	if v := a.metric(t, "go_gc_gomemlimit_bytes"); v != "5.8720256e+07" {
		t.Fatalf("go_gc_gomemlimit_bytes %q, want 56 MiB", v)
	}
	// (56 - 16) MiB / 2 / 2 ranks / 512 B
	if rec := a.log.find(t, "memory budget"); rec["from"] != "--memory-limit" || rec["maxRoomsPerRank"] != float64(20480) {
		t.Fatalf("budget log line %v", rec)
	}

	err := run(t.Context(), []string{"--first-rank=0", "--rank-count=2", "--socket-dir", t.TempDir(), "--plan-dir", dir, "--memory-limit", "64Mi"}, io.Discard, io.Discard)
	if err == nil || err.Error() != "--memory-limit: a memory limit of 64 MiB is below the 96 MiB the agent needs (its binary and libzmq alone take about 32 MiB)" {
		t.Fatalf("an agent given 64 MiB: %v", err)
	}
}
