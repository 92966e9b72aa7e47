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
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// streamRig is a real agent for decode rank 0 of the P8→D4 pair, its
// engine API on a unix socket, against a real prefill peer.
type streamRig struct {
	peer   *prefillpeer.Peer
	snap   receiver.PlanSnapshot
	m      *receiver.Manager
	reg    *prometheus.Registry
	api    *EngineAPI
	socket string
}

func newStreamRig(t *testing.T, opts StreamOptions, mut func(*receiver.Config)) *streamRig {
	t.Helper()
	l := fixtures.FragmentedP8D4()
	r := &streamRig{peer: receivertest.StartPeer(t, l, nil), snap: receivertest.Snapshot(t, l, 0)}
	r.m, r.reg = receivertest.StartAgent(t, &r.snap, 0, mut)
	r.api = NewEngineAPI(r.m, nil, opts)
	r.socket = filepath.Join(t.TempDir(), "rank-0.sock")
	ln, err := net.Listen("unix", r.socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r.api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ErrServerClosed once the test closes it
	t.Cleanup(func() { srv.Close() })
	return r
}

func (r *streamRig) engine() receiver.EngineInfo { return receivertest.Engine(r.snap, 0) }

// rawStream is an engine's stream spoken line by line, as a client in any
// language would.
type rawStream struct {
	t     *testing.T
	conn  net.Conn
	r     *bufio.Reader
	hello StreamEvent
}

// openRawStream registers info and returns the stream after its hello.
func openRawStream(t *testing.T, socket string, info receiver.EngineInfo) *rawStream {
	t.Helper()
	body, _ := json.Marshal(EngineBody{SessionID: &info.SessionID, KVDataPtrs: info.KVDataPtrs, StateDataPtrs: info.StateDataPtrs})
	return openRawStreamBody(t, socket, body)
}

// openRawStreamBody registers with body and returns the stream after its
// hello.
func openRawStreamBody(t *testing.T, socket string, body []byte) *rawStream {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/engine/stream HTTP/1.1\r\nHost: agent\r\nConnection: Upgrade\r\nUpgrade: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		StreamProtocol, len(body), body)
	s := &rawStream{t: t, conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	resp, err := http.ReadResponse(s.r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("opening the stream: %v %v", resp, err)
	}
	s.hello = s.next()
	if s.hello.Ev != EvHello {
		t.Fatalf("first event %+v, want hello", s.hello)
	}
	return s
}

// send writes operation lines.
func (s *rawStream) send(ops ...string) {
	s.t.Helper()
	var b []byte
	for _, op := range ops {
		b = append(append(b, op...), '\n')
	}
	if _, err := s.conn.Write(b); err != nil {
		s.t.Fatalf("sending %q: %v", ops, err)
	}
}

func openOp(room, ref int64, addr string) string {
	return fmt.Sprintf(`{"op":"open","room":%d,"ref":%d,"bootstrapAddr":%q}`, room, ref, addr)
}

func requestOp(room, ref int64, request string) string {
	return fmt.Sprintf(`{"op":"request","room":%d,"ref":%d,"request":%s}`, room, ref, request)
}

func clearOp(room, ref int64) string {
	return fmt.Sprintf(`{"op":"clear","room":%d,"ref":%d}`, room, ref)
}

// next reads one event (failing the test after 10 s or at the stream's end).
func (s *rawStream) next() StreamEvent {
	s.t.Helper()
	ev, err := s.read(10 * time.Second)
	if err != nil {
		s.t.Fatalf("reading the stream: %v", err)
	}
	return ev
}

func (s *rawStream) read(timeout time.Duration) (StreamEvent, error) {
	s.conn.SetReadDeadline(time.Now().Add(timeout))
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		return StreamEvent{}, err
	}
	return DecodeEvent(line[:len(line)-1])
}

// untilClosed reads events until the agent's closed line and returns them
// with it last.
func (s *rawStream) untilClosed() []StreamEvent {
	s.t.Helper()
	var evs []StreamEvent
	for {
		ev := s.next()
		evs = append(evs, ev)
		if ev.Ev == EvClosed {
			return evs
		}
	}
}

// rooms applies room events to a table the way a client does: the latest
// state of each (room, ref), a status only moving up and final once
// Success or Failed.
type roomTable map[int64]StreamEvent

func (tab roomTable) apply(ev StreamEvent) {
	if ev.Ev != EvRoom {
		return
	}
	cur, ok := tab[*ev.Room]
	if ok && cur.Ref == ev.Ref && (cur.Status.Finished() || *ev.Status <= *cur.Status && *ev.Status != receiver.Failed) {
		return
	}
	tab[*ev.Room] = ev
}
