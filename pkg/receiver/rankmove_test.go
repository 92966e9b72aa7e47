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

package receiver_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// A prefill that restarts behind the same bootstrap address comes back with
// its ranks on new ports, and registers them again: the bootstrap server's
// health check answers throughout. The agent must find the ranks again
// within a heartbeat interval: the room bootstrapped onto the old endpoints
// fails at once, naming the rank that moved, and the next room succeeds.
func TestPrefillRankThatMovesIsFoundAgain(t *testing.T) {
	const interval = 500 * time.Millisecond
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) {
		c.HeartbeatFloor = 10 * time.Millisecond
		c.HeartbeatInterval = interval
		c.WaitingTimeout = time.Minute // only the move may fail room 2
	})
	s.OpenAndRequest(1)
	if st := s.WaitFinished(0, 1); st.Status != receiver.Success {
		t.Fatalf("room 1 before the move: %+v", st)
	}
	s.Open(0, 2) // bootstrapped onto the endpoints the move makes stale
	receivertest.WaitStatus(t, s.Agents[0], 2, func(p receiver.TransferPoll) bool { return p == receiver.Bootstrapped })

	_, port, err := net.SplitHostPort(s.Peer.BootstrapAddr())
	if err != nil {
		t.Fatal(err)
	}
	old := s.Peer.Rank(0).Endpoint
	if err := s.Peer.Close(); err != nil {
		t.Fatal(err)
	}
	moved := time.Now()
	s.Peer = receivertest.StartPeer(t, s.Layout, func(c *prefillpeer.Config) {
		c.Logf = t.Logf
		c.BootstrapPort, _ = strconv.Atoi(port)
	})
	if s.Peer.Rank(0).Endpoint == old {
		t.Fatalf("the restarted rank 0 took its old endpoint %s: nothing moved", old)
	}
	if err := s.Agents[0].Request(2, s.Req); err != nil {
		t.Fatal(err)
	}
	s.ExpectFailure(0, 2, receiver.ReasonLostConnection, "moved from", "to "+s.Peer.Rank(0).Endpoint)
	if took := time.Since(moved); took > interval+time.Second {
		t.Fatalf("the move was noticed %v after it, more than a heartbeat interval (%v) and a second", took, interval)
	}
	s.OpenAndRequest(3)
	if st := s.WaitFinished(0, 3); st.Status != receiver.Success {
		t.Fatalf("room 3 after the move: %+v", st)
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if r.EngineRank < 2 && (c.Registrations != 1 || c.RoomsCompleted != 1) {
			return "want the agent's registration and room 3"
		}
		return ""
	})
}
