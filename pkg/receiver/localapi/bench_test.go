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

package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
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

// BenchmarkRoomsHTTP runs whole rooms (open → request → success → clear)
// through the local API against the prefill peer, P8→D4 fragmented, decode
// rank 0: POST /v1/rooms, POST .../request, GET ...?wait= (a long poll, no
// busy polling), DELETE. Clients: a minimal keep-alive HTTP/1.1 client (one
// request at a time, or pipelining open+request and poll+clear), over
// loopback TCP and a unix socket, and net/http's client for reference. The
// in-process client shares the two cores with the agent and the peer.
func BenchmarkRoomsHTTP(b *testing.B) {
	for _, tr := range []struct {
		name    string
		network string
		h2c     bool
		raw     bool
	}{
		{"raw-http1-tcp", "tcp", false, true}, {"raw-http1-unix", "unix", false, true},
		{"pipelined-http1-tcp", "tcp", false, true}, {"pipelined-http1-unix", "unix", false, true},
		{"nethttp-http1-tcp", "tcp", false, false},
	} {
		b.Run(tr.name, func(b *testing.B) {
			benchRoomsHTTP(b, tr.network, tr.h2c, tr.raw, strings.HasPrefix(tr.name, "pipelined"))
		})
	}
}

func benchRoomsHTTP(b *testing.B, network string, h2c, raw, pipelined bool) {
	inflight := envInt("BENCH_INFLIGHT", 32)
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(b, l, func(c *prefillpeer.Config) { c.KeepRequests = -1 })
	snap := receivertest.Snapshot(b, l, 0)
	m, _ := receivertest.StartAgent(b, &snap, 0, nil)
	c := serveAPI(b, m, network, h2c, inflight)
	info := receivertest.Engine(snap, 0)
	if err := c.call("PUT", "/v1/engine", map[string]any{"sessionId": info.SessionID, "kvDataPtrs": info.KVDataPtrs}, 200, nil); err != nil {
		b.Fatal(err)
	}
	d := &driver{addr: peer.BootstrapAddr(), c: c, raw: raw, pipelined: pipelined, network: network, apiAddr: c.addr}
	d.run(1000, inflight) // warm: connections, registration
	d.lat, d.failed = nil, 0
	b.ResetTimer()
	start := time.Now()
	d.run(b.N, inflight)
	elapsed := time.Since(start)
	b.StopTimer()
	if d.failed > 0 {
		b.Fatalf("%d rooms failed, first: %v", d.failed, d.firstErr)
	}
	slices.Sort(d.lat)
	pct := func(p float64) float64 { return float64(d.lat[int(p*float64(len(d.lat)-1))].Microseconds()) }
	b.ReportMetric(float64(len(d.lat))/elapsed.Seconds(), "rooms/s")
	b.ReportMetric(pct(0.5), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// serveAPI serves the agent's API as the command does and returns a
// client for it.
func serveAPI(b *testing.B, m Agent, network string, h2c bool, conns int) *client {
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(b.TempDir(), "api.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		b.Fatal(err)
	}
	addr = ln.Addr().String()
	srv := &http.Server{Handler: Handler(m, nil), Protocols: ServerProtocols()}
	go func() { _ = srv.Serve(ln) }() // ErrServerClosed once the test closes it
	b.Cleanup(func() { srv.Close() })
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	if network == "unix" {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}
	}
	if h2c {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	}
	base := "http://" + ln.Addr().String()
	if network == "unix" {
		base = "http://agent" // any host: the dialer ignores it
	}
	return &client{base: base, addr: addr, http: &http.Client{Transport: tr}}
}

type client struct {
	base, addr string
	http       *http.Client
}

// call sends a JSON request and decodes the answer into out.
func (c *client) call(method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

type driver struct {
	addr string
	c    *client
	raw  bool
	// pipelined sends open+request, then poll+clear, back to back on the
	// connection (HTTP/1.1 pipelining), as a client with a persistent
	// connection can once rooms bootstrap on open.
	pipelined bool
	network   string
	apiAddr   string
	next      atomic.Int64
	mu        sync.Mutex
	lat       []time.Duration
	failed    int
	firstErr  error
}

func (d *driver) run(n, inflight int) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rc *rawConn
			if d.raw {
				var err error
				if rc, err = dialRaw(d.network, d.apiAddr); err != nil {
					panic(err)
				}
				defer rc.c.Close()
			}
			for left.Add(-1) >= 0 {
				lat, err := d.room(rc, d.next.Add(1))
				d.mu.Lock()
				if err != nil {
					d.failed++
					if d.firstErr == nil {
						d.firstErr = err
					}
				} else {
					d.lat = append(d.lat, lat)
				}
				d.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

var requestBody = map[string]any{"kvIndices": []int64{1, 2, 3, 4, 5, 6, 7, 8}, "auxIndex": 1, "decodePrefixLen": 0}

// call sends a request on rc when set, else through net/http.
func (d *driver) call(rc *rawConn, method, path string, body any, want int, out any) error {
	if rc == nil {
		return d.c.call(method, path, body, want, out)
	}
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	status, resp, err := rc.do(method, path, raw)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: %d %s", method, path, status, resp)
	}
	if out != nil {
		return json.Unmarshal(resp, out)
	}
	return nil
}

func (d *driver) room(rc *rawConn, id int64) (time.Duration, error) {
	if d.pipelined {
		return d.pipelinedRoom(rc, id)
	}
	start := time.Now()
	path := "/v1/rooms/" + strconv.FormatInt(id, 10)
	var st RoomBody
	if err := d.call(rc, "POST", "/v1/rooms", map[string]any{"bootstrapAddr": d.addr, "room": id}, 201, &st); err != nil {
		return 0, err
	}
	// Only the first rooms wait for the bootstrap server, polled every
	// millisecond (a pace the room's latency includes).
	if err := poll.Until(time.Minute, func() error {
		if st.Status != receiver.Bootstrapping.String() {
			return nil
		}
		if err := d.call(rc, "GET", path, nil, 200, &st); err != nil {
			return poll.Stop(err)
		}
		if st.Status == receiver.Bootstrapping.String() {
			return errors.New("still Bootstrapping")
		}
		return nil
	}, poll.Every(time.Millisecond)); err != nil {
		return 0, err
	}
	if err := d.call(rc, "POST", path+"/request", requestBody, 202, nil); err != nil {
		return 0, err
	}
	if err := d.call(rc, "GET", path+"?wait=30s", nil, 200, &st); err != nil {
		return 0, err
	}
	lat := time.Since(start)
	if st.Status != "Success" {
		return 0, fmt.Errorf("room %d: %+v", id, st)
	}
	return lat, d.call(rc, "DELETE", path, nil, 204, nil)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// pipelinedRoom is one room in two writes: open+request, then wait+clear.
// A request that arrives while the room still bootstraps (only the first
// rooms of an address) is sent again once it is bootstrapped.
func (d *driver) pipelinedRoom(rc *rawConn, id int64) (time.Duration, error) {
	start := time.Now()
	path := "/v1/rooms/" + strconv.FormatInt(id, 10)
	open, _ := json.Marshal(map[string]any{"bootstrapAddr": d.addr, "room": id})
	req, _ := json.Marshal(requestBody)
	rc.send("POST", "/v1/rooms", open)
	rc.send("POST", path+"/request", req)
	if code, body, err := rc.receive(); err != nil || code != 201 {
		return 0, fmt.Errorf("open %d: %d %s %v", id, code, body, err)
	}
	code, body, err := rc.receive()
	if err != nil {
		return 0, err
	}
	if code == 409 { // still bootstrapping
		var st RoomBody
		for st.Status != "Bootstrapped" {
			if err := d.call(rc, "GET", path, nil, 200, &st); err != nil {
				return 0, err
			}
		}
		code, body, err = rc.do("POST", path+"/request", req)
	}
	if err != nil || code != 202 {
		return 0, fmt.Errorf("request %d: %d %s %v", id, code, body, err)
	}
	rc.send("GET", path+"?wait=30s", nil)
	rc.send("DELETE", path, nil)
	code, body, err = rc.receive()
	lat := time.Since(start)
	var st RoomBody
	if err == nil && code == 200 {
		err = json.Unmarshal(body, &st)
	}
	if err != nil || st.Status != "Success" {
		return 0, fmt.Errorf("room %d: %d %s %v", id, code, body, err)
	}
	if code, body, err = rc.receive(); err != nil || code != 204 {
		return 0, fmt.Errorf("clear %d: %d %s %v", id, code, body, err)
	}
	return lat, nil
}
