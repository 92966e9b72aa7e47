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

package prefillpeer

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// decodeRank plays one decode rank on loopback: a status PULL socket bound on
// a free port and PUSH sockets to prefill ranks. Only the test goroutine
// uses it.
type decodeRank struct {
	t       *testing.T
	zctx    *zmq.Context
	pull    *zmq.Socket
	port    int
	session string
	pushes  map[string]*zmq.Socket
}

func newDecodeRank(t *testing.T, session string) *decodeRank {
	t.Helper()
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	pull, port, err := zmqsock.BindPull(zctx, "127.0.0.1", 0, zmqsock.RecvTimeout(pollInterval))
	if err != nil {
		t.Fatal(err)
	}
	d := &decodeRank{t: t, zctx: zctx, pull: pull, port: port, session: session, pushes: map[string]*zmq.Socket{}}
	t.Cleanup(d.close)
	return d
}

func (d *decodeRank) close() {
	for _, s := range d.pushes {
		_ = s.Close()
	}
	_ = d.pull.Close()
	_ = d.zctx.Term()
}

func (d *decodeRank) send(endpoint string, frames [][]byte) {
	d.t.Helper()
	s, ok := d.pushes[endpoint]
	if !ok {
		var err error
		if s, err = zmqsock.ConnectPush(d.zctx, endpoint); err != nil {
			d.t.Fatal(err)
		}
		d.pushes[endpoint] = s
	}
	if _, err := s.SendMessage(frames); err != nil {
		d.t.Fatal(err)
	}
}

// register sends this decode rank's registration to a prefill rank.
func (d *decodeRank) register(r *Rank, kvPtrs, statePtrs int) {
	g := kvv1.Registration{DecodeIP: "127.0.0.1", DecodeStatusPort: d.port, SessionID: d.session}
	for i := range kvPtrs {
		g.KVPtrs = append(g.KVPtrs, uint64(0x7f0000000000+i*0x1000))
	}
	for i := range statePtrs {
		g.StatePtrs = append(g.StatePtrs, uint64(0x7e0000000000+i*0x1000))
	}
	d.send(r.Endpoint, g.Frames())
}

// request builds this decode rank's request for room.
func (d *decodeRank) request(room int64, required int, frags []transferplan.TransferFragment) kvv1.Request {
	return kvv1.Request{Room: room, DecodeIP: "127.0.0.1", DecodeStatusPort: d.port, SessionID: d.session,
		RequiredDstInfoNum: required, KVIndices: []int64{4, 5, 6}, AuxIndex: 2, Fragments: frags}
}

func (d *decodeRank) dummy(room int64, required int) kvv1.Request {
	return kvv1.Request{Room: room, DecodeIP: "127.0.0.1", DecodeStatusPort: d.port, SessionID: d.session, RequiredDstInfoNum: required, Dummy: true}
}

func (d *decodeRank) sendRequest(r *Rank, q kvv1.Request) { d.send(r.Endpoint, q.Frames()) }

// recv waits up to timeout for one status message's raw frames.
func (d *decodeRank) recv(timeout time.Duration) ([][]byte, bool) {
	d.t.Helper()
	var msg [][]byte
	err := poll.Until(timeout, func() error {
		var err error
		msg, err = d.pull.RecvMessageBytes(0) // the socket polls every pollInterval
		if err != nil && !zmqsock.Retry(err) {
			d.t.Fatal(err)
		}
		return err
	}, poll.Every(0))
	return msg, err == nil
}

func (d *decodeRank) recvStatus(timeout time.Duration) kvwire.Status {
	d.t.Helper()
	msg, ok := d.recv(timeout)
	if !ok {
		d.t.Fatalf("decode rank %s: no status within %v", d.session, timeout)
	}
	s, err := kvwire.DecodeStatus(msg)
	if err != nil {
		d.t.Fatalf("decode rank %s: bad status %q: %v", d.session, msg, err)
	}
	return s
}

func (d *decodeRank) expectSilence(wait time.Duration) {
	d.t.Helper()
	if msg, ok := d.recv(wait); ok {
		d.t.Fatalf("decode rank %s: unexpected status %q", d.session, msg)
	}
}

func startPeer(t *testing.T, cfg Config) *Peer {
	t.Helper()
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// errUnless is nil when cond holds, for testutil.Eventually.
func errUnless(cond bool) error {
	if cond {
		return nil
	}
	return errors.New("not yet")
}

// noLeaks fails the test if goroutines started during it outlive it.
func noLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		if poll.Until(2*time.Second, func() error { return errUnless(runtime.NumGoroutine() <= before) }) == nil {
			return
		}
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	})
}

// get fetches a bootstrap URL without keeping connections alive.
func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	return do(t, http.MethodGet, url, nil)
}

func do(t *testing.T, method, url string, body io.Reader) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// fragments builds rank tpRank's correct fragments for a P2→D1 layout of
// two KV buffers of 2048-byte prefill items (256-byte units) that decode
// rank 0 stacks into 4096-byte items.
func fragments(tpRank int) []transferplan.TransferFragment {
	var out []transferplan.TransferFragment
	for b, kind := range []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV} {
		out = append(out, transferplan.TransferFragment{
			BufferIndex: b, BufferKind: kind, SrcRank: tpRank, DstRank: 0,
			SrcPageStrideBytes: 2048, DstPageStrideBytes: 4096, DstByteOffset: int64(tpRank) * 2048, BytesPerPage: 2048,
		})
	}
	return out
}

var p2Buffers = kvv1.BufferLens{KVItemLens: []int64{2048, 2048}, KVUnitLens: []int64{256, 256}}
