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
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// TestReceiverInTheReferenceCallingOrder drives rooms the way the
// reference decode scheduler drives its receivers: construct, poll until
// the room left Bootstrapping, prefill, poll until Success, read the
// bootstrap token, clear. The peer checks what the agent sent.
func TestReceiverInTheReferenceCallingOrder(t *testing.T) {
	r := fragmented(t)
	mgr, err := agentclient.NewManager(t.Context(), r.client(t), r.engine())
	if err != nil {
		t.Fatal(err)
	}
	for i, room := range []int64{21, 22, 23} {
		r.peer.Script(room, prefillpeer.Success(int64(100+i)))
		rc := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), room)
		if st := pollUntil(t, rc, leftBootstrapping); st != receiver.Bootstrapped {
			t.Fatalf("room %d left Bootstrapping for %v: %v", room, st, rc.Failure(t.Context()))
		}
		rc.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{7, 8, room}, AuxIndex: 3, DecodePrefixLen: 16})
		if st := pollUntil(t, rc, finished); st != receiver.Success {
			t.Fatalf("room %d: %v: %v", room, st, rc.Failure(t.Context()))
		}
		if got := rc.BootstrapToken(); got != int64(100+i) {
			t.Fatalf("room %d: bootstrap token %d, want %d", room, got, 100+i)
		}
		if err := rc.Clear(t.Context()); err != nil {
			t.Fatal(err)
		}
		waitGone(t, mgr.Client(), room)
		if err := rc.Clear(t.Context()); err != nil {
			t.Fatalf("clearing room %d twice: %v", room, err)
		}
		if st := rc.Poll(t.Context()); st != receiver.Success {
			t.Fatalf("room %d polled after Clear: %v; a concluded room keeps its answer", room, st)
		}
	}
	if s := mgr.Stats(); s.UnknownEvents != 0 || s.Connects != 1 {
		t.Fatalf("stream stats %+v: a second Clear sent nothing the agent refused, one stream", s)
	}
	// both prefill targets of decode rank 0 got each room's request as sent
	for _, tp := range []int{0, 1} {
		var rooms []int64
		for _, q := range r.peer.Rank(tp).Requests() {
			rooms = append(rooms, q.Room)
			if !slices.Equal(q.KVIndices, []int64{7, 8, q.Room}) || q.AuxIndex != 3 || q.DecodePrefixLen != 16 {
				t.Fatalf("prefill rank %d got %+v", tp, q)
			}
		}
		if !slices.Equal(rooms, []int64{21, 22, 23}) {
			t.Fatalf("prefill rank %d got rooms %v", tp, rooms)
		}
	}
}

// TestPrefillAtOnce: a request sent while the room is still Bootstrapping
// is queued by the agent and sent when the room bootstraps; when the
// bootstrap fails instead, the room fails with the bootstrap's reason.
func TestPrefillAtOnce(t *testing.T) {
	r := fragmented(t)
	c := r.client(t)
	mgr, err := agentclient.NewManager(t.Context(), c, r.engine())
	if err != nil {
		t.Fatal(err)
	}
	r.peer.Script(51, prefillpeer.Success(8))
	opened, err := c.Open(t.Context(), r.peer.BootstrapAddr(), 51)
	if err != nil || opened.Status != receiver.Bootstrapping {
		t.Fatalf("first room of a new prefill: %+v %v, want Bootstrapping", opened, err)
	}
	if _, err := c.Request(t.Context(), 51, agentclient.Request{KVIndices: []int64{4}, AuxIndex: 1}); err != nil {
		t.Fatalf("request while Bootstrapping: %v", err)
	}
	if got, err := c.Wait(t.Context(), 51, 10*time.Second); err != nil || got.Status != receiver.Success || got.BootstrapToken != 8 {
		t.Fatalf("queued request: %+v %v", got, err)
	}

	down := deadAddr(t)
	rc := mgr.NewReceiver(t.Context(), down, 52)
	rc.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{4}, AuxIndex: 1})
	if st := pollUntil(t, rc, finished); st != receiver.Failed {
		t.Fatalf("room 52 against a dead bootstrap server: %v", st)
	}
	if fe := rc.Failure(t.Context()); fe.FailureCode != string(receiver.ReasonParallelInfoUnavailable) || !strings.Contains(fe.FailureReason, down) {
		t.Fatalf("failure of a queued request's room: %+v", fe)
	}
}

func TestReceiverFaultsSurfaceThroughFailure(t *testing.T) {
	r := fragmented(t)
	mgr, err := agentclient.NewManager(t.Context(), r.client(t), r.engine())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("prefill reports failure", func(t *testing.T) {
		r.peer.Script(31, prefillpeer.Failure())
		rc := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 31)
		pollUntil(t, rc, leftBootstrapping)
		rc.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{1}, AuxIndex: 0})
		if st := pollUntil(t, rc, finished); st != receiver.Failed {
			t.Fatalf("room 31: %v", st)
		}
		fe := rc.Failure(t.Context())
		if fe.BootstrapRoom != 31 || fe.FailureCode != string(receiver.ReasonPrefillReportedFailure) || fe.RemoteEndpoint != r.peer.BootstrapAddr() || fe.FailureReason == "" {
			t.Fatalf("failure: %+v", fe)
		}
		waitGone(t, mgr.Client(), 31) // Failure cleared it
		if st := rc.Poll(t.Context()); st != receiver.Failed {
			t.Fatalf("poll after Failure: %v", st)
		}
	})
	t.Run("bootstrap server down", func(t *testing.T) {
		addr := deadAddr(t)
		rc := mgr.NewReceiver(t.Context(), addr, 32)
		if st := pollUntil(t, rc, leftBootstrapping); st != receiver.Failed {
			t.Fatalf("room 32 against a dead bootstrap server: %v", st)
		}
		fe := rc.Failure(t.Context())
		if fe.FailureCode != string(receiver.ReasonParallelInfoUnavailable) || !strings.Contains(fe.FailureReason, addr) || fe.RemoteEndpoint != addr {
			t.Fatalf("failure: %+v", fe)
		}
	})
	t.Run("failed on another rank", func(t *testing.T) {
		rc := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 33)
		pollUntil(t, rc, leftBootstrapping)
		fe := rc.Failure(t.Context())
		if fe.FailureCode != agentclient.FailureOnAnotherRank || fe.FailureReason != "Failed due to an unknown reason from another rank" {
			t.Fatalf("failure: %+v", fe)
		}
		if st := rc.Poll(t.Context()); st != receiver.Failed {
			t.Fatalf("poll after Failure: %v", st)
		}
	})
	t.Run("room number reused while open", func(t *testing.T) {
		first := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 34)
		defer func() { _ = first.Clear(t.Context()) }() // only tidies up; the test checks the second room
		again := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 34)
		if st := again.Poll(t.Context()); st != receiver.Failed {
			t.Fatalf("second room 34: %v", st)
		}
		fe := again.Failure(t.Context())
		if fe.FailureCode != agentclient.FailureAgentRefused || !strings.Contains(fe.FailureReason, string(receiver.CodeRoomExists)) {
			t.Fatalf("failure: %+v", fe)
		}
	})
}

func TestManagerRefusedOrAbsentAgent(t *testing.T) {
	r := fragmented(t)
	wrong := r.engine()
	wrong.KVDataPtrs = wrong.KVDataPtrs[:1]
	_, err := agentclient.NewManager(t.Context(), r.client(t), wrong)
	var ae *agentclient.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 400 || ae.Code != string(receiver.CodeInvalidArgument) || !strings.Contains(ae.Message, "registers 1 KV") {
		t.Fatalf("registering 1 of the plan's buffers: %v", err)
	}

	absent := agentclient.New(agentclient.SocketPath(t.TempDir(), 3), agentclient.Options{})
	_, err = agentclient.NewManager(t.Context(), absent, r.engine())
	var ue *agentclient.UnavailableError
	if !errors.As(err, &ue) || ue.Timeout() || !strings.Contains(err.Error(), "rank-3.sock") {
		t.Fatalf("no agent: %v", err)
	}
}

// TestReceiverWhenTheAgentGoesAway: an agent that stops fails the
// engine's rooms through Poll, with its reason, never through a panic or
// an error; while it is gone new rooms fail AgentUnavailable.
func TestReceiverWhenTheAgentGoesAway(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	r := newRig(t, l, 0)
	c := r.client(t)
	mgr, err := agentclient.NewManager(t.Context(), c, r.engine())
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	rc := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 41)
	pollUntil(t, rc, leftBootstrapping)
	r.agent.Close()
	r.server.Close()
	if st := pollUntil(t, rc, finished); st != receiver.Failed {
		t.Fatalf("poll without an agent: %v", st)
	}
	if fe := rc.Failure(t.Context()); fe.FailureCode != string(receiver.ReasonShutdown) || !strings.Contains(fe.FailureReason, "shut down") {
		t.Fatalf("failure: %+v", fe)
	}
	gone := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 42)
	if fe := gone.Failure(t.Context()); gone.Poll(t.Context()) != receiver.Failed || fe.FailureCode != agentclient.FailureAgentUnavailable || !strings.Contains(fe.FailureReason, r.socket) {
		t.Fatalf("a room while the agent is gone: %+v", fe)
	}
}

// TestReceiverAfterAnAgentRestart: rooms opened before fail (the agent
// said it shut down); the manager connects and registers again by itself,
// so new rooms work.
func TestReceiverAfterAnAgentRestart(t *testing.T) {
	r := fragmented(t)
	mgr, err := agentclient.NewManager(t.Context(), r.client(t), r.engine())
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	before := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 61)
	pollUntil(t, before, leftBootstrapping)
	r.restart(t)
	before.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{1}})
	if st := pollUntil(t, before, finished); st != receiver.Failed {
		t.Fatalf("a room opened before the restart: %v", st)
	}
	if fe := before.Failure(t.Context()); fe.FailureCode != string(receiver.ReasonShutdown) {
		t.Fatalf("failure: %+v", fe)
	}
	testutil.Eventually(t, 10*time.Second, "the manager connecting again", func() error {
		if st := mgr.Stats(); st.Connects < 2 {
			return fmt.Errorf("%+v", st)
		}
		return nil
	})
	after := mgr.NewReceiver(t.Context(), r.peer.BootstrapAddr(), 62)
	after.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{1}})
	if st := pollUntil(t, after, finished); st != receiver.Success {
		t.Fatalf("a room after the restart: %v: %+v", st, after.Failure(t.Context()))
	}
}
