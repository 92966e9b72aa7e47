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
	"fmt"
	"time"

	"slices"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

func TestFragmentedP8D4(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0, 1, 2, 3}, nil, nil)
	s.Peer.Script(42, prefillpeer.Success(1234))
	s.OpenAndRequest(42)
	for i := range s.Agents {
		st := s.WaitFinished(i, 42)
		if st.Status != receiver.Success || st.BootstrapToken != 1234 {
			t.Fatalf("decode rank %d: %s token %d, want Success with token 1234", i, st.Status, st.BootstrapToken)
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if c.Registrations != 1 || c.Requests != 1 || c.Dummies != 0 || c.Errors != 0 {
			return fmt.Sprintf("%+v, want one registration and one request", c)
		}
		return ""
	})
	for _, r := range s.Peer.Ranks() { // every prefill rank got exactly its fragments
		req := r.Requests()[0]
		want := s.Set.Plans[r.TPRank/2].Targets[r.TPRank%2].Fragments
		if !slices.EqualFunc(req.Fragments, want, func(a, b transferplan.TransferFragment) bool {
			return a.SrcByteOffset == b.SrcByteOffset && a.DstByteOffset == b.DstByteOffset && a.BufferIndex == b.BufferIndex && a.BytesPerPage == b.BytesPerPage
		}) {
			t.Fatalf("prefill rank %d received fragments %+v, want %+v", r.EngineRank, req.Fragments, want)
		}
		if !slices.Equal(req.KVIndices, receivertest.Request.KVIndices) || req.AuxIndex != receivertest.Request.AuxIndex {
			t.Fatalf("prefill rank %d received %+v", r.EngineRank, req)
		}
	}
}

// A fragmented P8→D4 layout at 16 tokens per page through the agents: each
// prefill rank executes its 64 token-row fragments byte by byte on the
// peer's synthetic memories (every byte right, as it is written), and the
// bytes written for each decode rank are its whole 3 pages of 4 buffers.
func TestFragmentedP8D4SixteenTokenPages(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4Tokens16(), []int{0, 1, 2, 3}, nil, nil)
	s.Peer.Script(43, prefillpeer.Success(99))
	s.OpenAndRequest(43)
	for i := range s.Agents {
		if st := s.WaitFinished(i, 43); st.Status != receiver.Success || st.BootstrapToken != 99 {
			t.Fatalf("decode rank %d: %s (%+v), want Success with token 99", i, st.Status, st.Failure)
		}
	}
	sessions := map[int]string{}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if c.Requests != 1 || c.Errors != 0 {
			return fmt.Sprintf("%+v, want one request and no error", c)
		}
		req := r.Requests()[0]
		if len(req.Fragments) != 4*16 {
			return fmt.Sprintf("%d fragments, want 4 buffers × 16 token rows", len(req.Fragments))
		}
		sessions[req.Fragments[0].DstRank] = req.SessionID
		return ""
	})
	const want = 3 * 4 * 16 * 256 // pages × buffers × decode item
	for d := range 4 {
		if got := s.Peer.TransferredBytes(43, sessions[d]); got != want {
			t.Errorf("decode rank %d (session %q): %d bytes written, want %d", d, sessions[d], got, want)
		}
	}
}

func TestIdentityP4D4(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.Identity(), []int{0, 1, 2, 3}, nil, nil)
	s.Peer.Script(9, prefillpeer.Success(77, 5, 6))
	s.OpenAndRequest(9)
	for i := range s.Agents {
		st := s.WaitFinished(i, 9)
		if st.Status != receiver.Success || st.BootstrapToken != 77 || !slices.Equal(st.SpecCandidateIDs, []int32{5, 6}) {
			t.Fatalf("decode rank %d: %+v, want Success, token 77, candidates [5 6]", i, st)
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if c.Requests != 1 || c.Errors != 0 || len(r.Requests()[0].Fragments) != 0 {
			return fmt.Sprintf("%+v; identity targets get one request without fragments", c)
		}
		return ""
	})
}

func TestReplicatedGQAP4D1ReleasesIdleRanks(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.ReplicatedGQAP4D1(), []int{0}, nil, nil)
	if idle := s.Set.Plans[0].IdlePrefillTPRanks; !slices.Equal(idle, []int{1, 3}) {
		t.Fatalf("fixture: idle ranks %v, want [1 3]", idle)
	}
	s.Peer.Script(5, prefillpeer.Success(8, 4, 2)) // candidates sent: the plan does not let the engine use them
	if s.Set.Plans[0].SupportsRemoteSpecCandidates {
		t.Fatal("fixture: a fragmented plan supports remote spec candidates")
	}
	s.OpenAndRequest(5)
	if st := s.WaitFinished(0, 5); st.Status != receiver.Success || st.BootstrapToken != 8 || st.SpecCandidateIDs != nil {
		t.Fatalf("room 5: %+v; fragmented plans complete with the token but without the spec candidates prefill sent", st)
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		idle := r.TPRank == 1 || r.TPRank == 3
		if c.Registrations != 1 || c.Requests != 1 || c.RoomsCompleted != 1 || (c.Dummies == 1) != idle || c.Errors != 0 {
			return fmt.Sprintf("(idle %t) %+v; every rank must complete the room", idle, c)
		}
		if idle && c.StatusesSent != 0 {
			return "an idle rank answered a dummy"
		}
		return ""
	})
}

func TestMLAP8D2SendsDummies(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.MLAP8D2(), []int{0, 1}, nil, nil)
	s.Peer.Script(11, prefillpeer.Success(3, 9))
	s.OpenAndRequest(11)
	for i := range s.Agents {
		if st := s.WaitFinished(i, 11); st.Status != receiver.Success || !slices.Equal(st.SpecCandidateIDs, []int32{9}) {
			t.Fatalf("decode rank %d: %+v", i, st)
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		real := r.TPRank%4 == 0 // decode rank d pulls from prefill rank 4d; 4d+1..4d+3 get dummies
		if c.Requests != 1 || c.RoomsCompleted != 1 || (c.Dummies == 0) != real || (c.StatusesSent == 1) != real || c.Errors != 0 {
			return fmt.Sprintf("(real %t) %+v", real, c)
		}
		return ""
	})
}

func TestMLAL15NeedsEveryPrefillRank(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.MLAL15P2D2(), []int{0, 1}, nil, nil)
	s.Peer.ScriptRank(21, 0, prefillpeer.Success(-1))
	s.Peer.ScriptRank(21, 1, prefillpeer.Success(55, 1, 2))
	s.OpenAndRequest(21)
	for i := range s.Agents {
		st := s.WaitFinished(i, 21)
		if st.Status != receiver.Success || st.BootstrapToken != 55 || !slices.Equal(st.SpecCandidateIDs, []int32{1, 2}) {
			t.Fatalf("decode rank %d: %+v, want the token of the rank that had one", i, st)
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if c.Requests != 2 || c.StatusesSent != 2 || c.Dummies != 0 {
			return fmt.Sprintf("%+v; both decode ranks pull from every prefill rank", c)
		}
		return ""
	})
}

// One of the two L1.5 targets answering does not complete the room: it waits
// for the other (no clock involved), and completes on its answer.
func TestMLAL15WaitsForAllResponses(t *testing.T) {
	// both decode ranks: an L1.5 prefill rank answers once all of them asked
	s := receivertest.NewScenario(t, fixtures.MLAL15P2D2(), []int{0, 1}, nil, nil)
	s.Peer.ScriptRank(22, 1, prefillpeer.Silence())
	s.OpenAndRequest(22)
	s.WaitCounter(0, 1, receivertest.MetricStatusMessages) // prefill rank 0's Success arrived and counted
	if st, _ := s.Agents[0].Status(22); st.Status != receiver.Bootstrapped {
		t.Fatalf("room 22 after 1 of 2 responses: %+v, want still Bootstrapped", st)
	}
	if err := prefillpeer.SendStatus(receivertest.StatusEndpoint(t, s.Agents[0]), kvwire.Status{Room: 22, State: kvwire.Success, PrefillTPRank: 1, BootstrapToken: -1}); err != nil {
		t.Fatal(err)
	}
	if st := s.WaitFinished(0, 22); st.Status != receiver.Success {
		t.Fatalf("room 22 after both responses: %+v", st)
	}
}

// A room that times out with one of two responses says so. The timeout only
// starts the failure once prefill rank 0's Success was counted: the clock
// is long (a loaded machine delivers a loopback message in far less) and
// the test checks the order instead of assuming it.
func TestMLAL15TimeoutCountsTheResponses(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.MLAL15P2D2(), []int{0, 1}, nil, func(c *receiver.Config) { c.WaitingTimeout = 3 * time.Second })
	s.Peer.ScriptRank(23, 1, prefillpeer.Silence())
	s.OpenAndRequest(23)
	s.WaitCounter(0, 1, receivertest.MetricStatusMessages)
	if st, _ := s.Agents[0].Status(23); st.Status.Finished() {
		t.Fatalf("room 23 finished before prefill rank 0's Success was counted: %+v (the machine is slower than 3 s per loopback message?)", st)
	}
	s.ExpectFailure(0, 23, receiver.ReasonWaitingTimeout, "1 of 2 prefill ranks reported Success")
}

func TestDPAttentionRoutesRoomToItsGroup(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.DPAttention(), []int{0}, nil, nil)
	for _, room := range []int64{100, 101, 102} {
		s.OpenAndRequest(room)
		if st := s.WaitFinished(0, room); st.Status != receiver.Success {
			t.Fatalf("room %d: %+v", room, st)
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		want := map[[2]int]int64{{0, 0}: 2, {1, 0}: 1}[[2]int{r.DPGroup, r.TPRank}] // rooms 100, 102 → group 0; 101 → group 1
		if c.Requests != want || c.Registrations != min(want, 1) {
			return fmt.Sprintf("dp group %d TP rank %d: %+v, want %d requests", r.DPGroup, r.TPRank, c, want)
		}
		return ""
	})
}
