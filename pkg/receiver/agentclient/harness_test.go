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
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// rig is a real agent for one decode rank of a layout, serving its local
// API on a unix socket, against a real prefill peer on loopback.
type rig struct {
	peer     *prefillpeer.Peer
	snap     receiver.PlanSnapshot
	rank     int
	socket   string
	accepted *atomic.Int64 // connections the agent accepted
	server   *http.Server
	agent    *receiver.Manager
}

// restart replaces the rig's agent by a new one on the same socket, as the
// kubelet restarts a sidecar: the old one stops (its streams end), the new
// one has no rooms and no engine registered.
func (r *rig) restart(t *testing.T) {
	r.agent.Close()
	r.server.Close() // closing the listener removes the socket file
	r.agent, _ = receivertest.StartAgent(t, &r.snap, r.rank, nil)
	r.server = r.serve(t, r.agent)
}

func newRig(t testing.TB, l planv1.Layout, rank int) *rig {
	t.Helper()
	peer := receivertest.StartPeer(t, l, nil)
	snap := receivertest.Snapshot(t, l, rank)
	m, _ := receivertest.StartAgent(t, &snap, rank, nil)
	r := &rig{peer: peer, snap: snap, rank: rank, socket: agentclient.SocketPath(t.TempDir(), rank), accepted: new(atomic.Int64), agent: m}
	r.server = r.serve(t, m)
	return r
}

// serve serves m's local API on the rig's socket until the test ends.
func (r *rig) serve(t testing.TB, m *receiver.Manager) *http.Server {
	ln, err := net.Listen("unix", r.socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: localapi.Handler(m, nil), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(countingListener{ln, r.accepted}) }() // ErrServerClosed once the test closes it
	t.Cleanup(func() { srv.Close() })
	return srv
}

func fragmented(t *testing.T) *rig { return newRig(t, fixtures.FragmentedP8D4(), 0) }

// client is a fresh client of the rig's agent.
func (r *rig) client(t testing.TB) *agentclient.Client {
	c := agentclient.New(r.socket, agentclient.Options{Timeout: 5 * time.Second})
	t.Cleanup(c.Close)
	return c
}

func (r *rig) engine() receiver.EngineInfo { return receivertest.Engine(r.snap, r.rank) }

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// deadAddr is a loopback address nothing listens on: a bootstrap server
// that is down.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// pollUntil polls the receiver like the reference decode scheduler (once
// per loop) until done says stop, and returns the last status.
// waitGone waits until the agent forgot room (a clear is sent without
// waiting for the agent, which applies it moments later).
func waitGone(t *testing.T, c *agentclient.Client, room int64) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("room %d gone after Clear", room), func() error {
		if _, err := c.Room(t.Context(), room); agentclient.CodeOf(err) != string(receiver.CodeRoomNotFound) {
			return fmt.Errorf("%v, want RoomNotFound", err)
		}
		return nil
	})
}

func pollUntil(t *testing.T, rc *agentclient.Receiver, done func(receiver.TransferPoll) bool) receiver.TransferPoll {
	t.Helper()
	st, err := pollFor(t, rc, done)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// pollFor is pollUntil for goroutines other than the test's: it returns
// an error after 10s.
func pollFor(t *testing.T, rc *agentclient.Receiver, done func(receiver.TransferPoll) bool) (receiver.TransferPoll, error) {
	var st receiver.TransferPoll
	err := poll.Until(10*time.Second, func() error {
		if st = rc.Poll(t.Context()); !done(st) {
			return fmt.Errorf("room %d still %v", rc.BootstrapRoom(), st)
		}
		return nil
	}, poll.Every(time.Millisecond)) // once per loop, as the scheduler polls
	return st, err
}

func leftBootstrapping(st receiver.TransferPoll) bool { return st != receiver.Bootstrapping }
func finished(st receiver.TransferPoll) bool          { return st == receiver.Success || st == receiver.Failed }
