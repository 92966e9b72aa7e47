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
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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

// dialFrom connects to addr from the local IP src.
func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	return d.Dial("tcp", addr)
}

// loopbackSource is 127.0.0.N: Linux routes all of 127.0.0.0/8 to
// loopback, so each is a source address of its own.
func loopbackSource(n int) string { return fmt.Sprintf("127.0.0.%d", n) }

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

	// spread over as many source addresses as it takes to fill the
	// listener, since one address may hold only probeMaxConnsPerSource
	idle := make([]net.Conn, 0, probeMaxConns)
	for i := range probeMaxConns {
		c, err := dialFrom(loopbackSource(1+i/probeMaxConnsPerSource), addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	opened := time.Now()
	for i := range 5 {
		extra, err := dialFrom(loopbackSource(100+i), addr) // a source with nothing open
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

// One address holding 100 idle connections (and opening new ones as fast
// as they are closed) cannot starve the kubelet: /healthz and /readyz from
// another address answer within a probe's 2 s timeout, while the agent
// holds at most probeMaxConnsPerSource of the hog's connections (and so at
// most probeMaxConns more descriptors whatever the sources).
func TestProbeAnswersAnotherAddressWhileOneHogsIt(t *testing.T) {
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	receivertest.ProjectPlans(t, dir, 1, objects)
	a, cmd := startAgentProcess(t, t.TempDir(), 0, 1, "--plan-dir", dir)
	addr := strings.TrimPrefix(a.probe, "http://")
	fds := func() int {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()

	const hogConns = 100
	hog, stopHog := loopbackSource(2), make(chan struct{})
	var wg sync.WaitGroup
	for range hogConns {
		wg.Add(1)
		go func() { // hold a connection; when the agent closes it, open another
			defer wg.Done()
			for {
				c, err := dialFrom(hog, addr)
				if err == nil {
					select {
					case <-stopHog:
					case <-closedChan(c):
					}
					c.Close()
				}
				select {
				case <-stopHog:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
	}
	defer func() { close(stopHog); wg.Wait() }()
	time.Sleep(time.Second)
	during := fds()

	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, // as the kubelet probes: a connection each
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(loopbackSource(1))}}).DialContext,
	}}
	for _, path := range []string{"/healthz", "/readyz"} {
		answered := 0
		for range 20 {
			resp, err := probe.Get(a.probe + path)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered++
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("%s answered %d of 20 probes from %s while %s held %d connections", path, answered, loopbackSource(1), hog, hogConns)
		if answered < 19 {
			t.Errorf("%s answered %d of 20 probes, want at least 19", path, answered)
		}
	}
	t.Logf("agent descriptors: %d before the hog, %d during it", before, during)
	if during-before > probeMaxConnsPerSource+2 { // +2: a connection being accepted or closed
		t.Errorf("the agent holds %d more descriptors during the hog, want at most %d", during-before, probeMaxConnsPerSource)
	}
}

// closedChan is closed when the peer closes c (or c fails).
func closedChan(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Read(make([]byte, 1))
	}()
	return done
}

// The listener's slots: at most max in all and perSource from one
// address, each given back once when its connection closes.
func TestLimitListenerSlots(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(ln, 4, 2, prometheus.NewRegistry())
	defer l.Close()
	for i, c := range []struct {
		src  string
		want bool
	}{{"a", true}, {"a", true}, {"a", false}, {"b", true}, {"c", true}, {"d", false}} {
		if got := l.take(c.src); got != c.want {
			t.Fatalf("take %d from %s: %v, want %v", i, c.src, got, c.want)
		}
	}
	l.give("a")
	if !l.take("d") || l.take("a") {
		t.Fatal("a slot given back by a went to d, and a stays at its share while the listener is full")
	}
	for _, src := range []string{"a", "b", "c", "d"} {
		l.give(src)
	}
	if l.held != 0 || len(l.bySrc) != 0 {
		t.Fatalf("after every connection closed: %d held, sources %v", l.held, l.bySrc)
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
