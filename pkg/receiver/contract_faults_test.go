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
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// A prefill whose live contract is not the plan's is refused before
// anything is sent to it, with the field that differs and both values.

// editContract replaces old (which must occur) in every place of contract.
func editContract(t *testing.T, contract []byte, old, new string) []byte {
	t.Helper()
	if !strings.Contains(string(contract), old) {
		t.Fatalf("the contract has no %q", old)
	}
	return []byte(strings.ReplaceAll(string(contract), old, new))
}

func expectNothingSent(t *testing.T, p *prefillpeer.Peer) {
	t.Helper()
	for _, r := range p.Ranks() {
		if c := r.Counts(); c.Registrations != 0 || c.Requests != 0 {
			t.Fatalf("prefill rank %d got %+v; nothing should have been sent to it", r.EngineRank, c)
		}
	}
}

// The engine itself would refuse the live prefill contract with the decode
// contract: the room fails with the engine's reason, naming the field and
// both values.
func TestContractPrefillTheEngineRefusesNamesTheField(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0}, func(c *prefillpeer.Config) {
		c.Contract = editContract(t, c.Contract, `"dtype":"bfloat16"`, `"dtype":"float16"`)
	}, nil)
	s.Open(0, 1)
	s.ExpectFailure(0, 1, receiver.ReasonContractMismatch, s.Peer.BootstrapAddr(), "ContractMismatchFieldSemantics", "dtype", "float16", "bfloat16", "prefillContractSHA256")
	expectNothingSent(t, s.Peer)
	s.Open(0, 2) // refused from the cache, without asking again
	s.ExpectFailure(0, 2, receiver.ReasonContractMismatch, "dtype")
	if n := s.Peer.BootstrapCounts().ParallelInfo; n != 1 {
		t.Fatalf("the bootstrap server was asked %d times for its parallel info, want 1 (the refusal is kept for a heartbeat interval)", n)
	}
}

// A live prefill contract the engine would pair with the decode's, but
// that is not the plan's (another arena size): once a prefill served the
// plan's contract, the refusal names the first field that differs.
func TestContractPrefillNotThePlansNamesTheField(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, nil)
	s.Peer.SetDefault(prefillpeer.Success(1))
	s.OpenAndRequest(1) // this prefill serves the plan's contract
	other := receivertest.StartContractPeer(t, pair, func(c *prefillpeer.Config) {
		c.Contract = editContract(t, c.Contract, `"page_count":48`, `"page_count":24`)
	})
	if err := s.Agents[0].Open(other.BootstrapAddr(), 2); err != nil {
		t.Fatal(err)
	}
	s.ExpectFailure(0, 2, receiver.ReasonContractMismatch, other.BootstrapAddr(), "plan.groups[0].page_count is 48 in the plan's contract, 24 in the prefill's")
	expectNothingSent(t, other)
}

// Without the plan's prefill contract at hand (the plan holds its hash),
// the refusal names the hash field and both hashes.
func TestContractPrefillNotThePlansNamesTheHashes(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0}, func(c *prefillpeer.Config) {
		c.Contract = editContract(t, c.Contract, `"page_count":48`, `"page_count":24`)
	}, nil)
	s.Open(0, 1)
	planned := s.Set.Layout.PrefillContractSHA256
	s.ExpectFailure(0, 1, receiver.ReasonContractMismatch, "prefillContractSHA256: the plan's "+planned[:12], "spec.cacheContracts.prefill")
	expectNothingSent(t, s.Peer)
}

// A prefill that comes back on the same bootstrap address with another
// contract while rooms are open: the heartbeat reads its answer, the open
// rooms fail naming what changed, and the next room is refused (the new
// contract is not the plan's).
func TestContractPrefillChangesWhileRoomsAreOpen(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	fast := func(c *receiver.Config) {
		c.HeartbeatInterval, c.HeartbeatFloor, c.HeartbeatMisses = 50*time.Millisecond, 10*time.Millisecond, 1000
	}
	s := receivertest.NewContractScenario(t, pair, []int{0}, nil, fast)
	s.Peer.SetDefault(prefillpeer.Silence()) // the room stays open
	s.Open(0, 1)
	if err := s.Agents[0].Request(1, s.Req); err != nil {
		t.Fatal(err)
	}
	receivertest.WaitStatus(t, s.Agents[0], 1, func(p receiver.TransferPoll) bool { return p >= receiver.Bootstrapped })
	addr := s.Peer.BootstrapAddr()
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	s.Peer.Close()
	again := receivertest.StartContractPeer(t, pair, func(c *prefillpeer.Config) {
		c.BootstrapPort = port
		c.Contract = editContract(t, c.Contract, `"page_count":48`, `"page_count":24`)
	})
	s.ExpectFailure(0, 1, receiver.ReasonContractChanged, addr, "plan.groups[0].page_count was 48, is now 24")
	if err := s.Agents[0].Open(addr, 2); err != nil {
		t.Fatal(err)
	}
	s.ExpectFailure(0, 2, receiver.ReasonContractMismatch, "plan.groups[0].page_count is 48 in the plan's contract, 24 in the prefill's")
	expectNothingSent(t, again)
}

// A bootstrap server that answers the v1 wire to a contract plan: nothing
// is sent, the room fails with WireMismatch.
func TestContractPlanV1BootstrapAnswer(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0}, nil, nil)
	s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultOtherWire})
	s.Open(0, 1)
	s.ExpectFailure(0, 1, receiver.ReasonWireMismatch, "answered the v1 wire", "cache-contract wire")
	expectNothingSent(t, s.Peer)
}

// A bootstrap server that answers the contract wire to one decode rank and
// the v1 wire to another (two backends of one service): the second rank's
// room is refused, and the first rank's open room fails at its next
// heartbeat, which sees the v1 answer; no room is left open.
func TestContractBootstrapAnswersBothWires(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	fast := func(c *receiver.Config) {
		c.HeartbeatInterval, c.HeartbeatFloor = 50*time.Millisecond, 10*time.Millisecond
	}
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, fast)
	s.Peer.SetDefault(prefillpeer.Silence())
	s.Open(0, 1)
	if st := receivertest.WaitStatus(t, s.Agents[0], 1, func(p receiver.TransferPoll) bool { return p != receiver.Bootstrapping }); st.Status != receiver.Bootstrapped {
		t.Fatalf("decode rank 0: %s (%v)", st.Status, st.Failure)
	}
	s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultOtherWire})
	s.Open(1, 1)
	s.ExpectFailure(1, 1, receiver.ReasonWireMismatch, "answered the v1 wire")
	s.ExpectFailure(0, 1, receiver.ReasonWireMismatch, "now answers the v1 wire")
	for _, r := range s.Peer.Ranks() {
		if c := r.Counts(); c.Requests != 0 {
			t.Fatalf("prefill rank %d got %d pre-allocations", r.EngineRank, c.Requests)
		}
	}
}

// A v1 plan and a bootstrap server that answers with a cache contract.
func TestV1PlanContractBootstrapAnswer(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, nil)
	s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultOtherWire})
	s.Open(0, 1)
	s.ExpectFailure(0, 1, receiver.ReasonWireMismatch, "answered the cache-contract wire", "the v1 wire")
	for _, r := range s.Peer.Ranks() {
		if c := r.Counts(); c.Registrations != 0 {
			t.Fatalf("prefill rank %d got %+v", r.EngineRank, c)
		}
	}
}

// Success from a prefill rank the room's plan does not name as a source
// (a source of another decode rank, an idle rank met as a dummy) does not
// complete it; Success from its one source does.
func TestContractSuccessFromAnUnplannedRankDoesNotComplete(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-replicas-p8-d2") // decode rank 0: source 0, dummies 1-3, 5-7; rank 1: source 4
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, nil)
	s.Peer.SetDefault(prefillpeer.Silence())
	s.OpenAndRequest(9)
	ep := receivertest.StatusEndpoint(t, s.Agents[0])
	for _, rank := range []int{4, 1, 6} {
		if err := prefillpeer.SendStatus(ep, kvwire.Status{Room: 9, State: kvwire.Success, PrefillTPRank: rank, BootstrapToken: 5}); err != nil {
			t.Fatal(err)
		}
	}
	s.WaitCounter(0, 1, "pdtopo_receiver_status_messages_rejected_total", "reason", receiver.RejectUnexpectedRank)
	s.WaitCounter(0, 2, "pdtopo_receiver_status_messages_rejected_total", "reason", receiver.RejectIdlePrefillRank)
	if st, _ := s.Agents[0].Status(9); st.Status.Finished() {
		t.Fatalf("room 9 finished (%s) on Success from ranks the plan does not name", st.Status)
	}
	if err := prefillpeer.SendStatus(ep, kvwire.Status{Room: 9, State: kvwire.Success, PrefillTPRank: 0, BootstrapToken: 6}); err != nil {
		t.Fatal(err)
	}
	if st := s.WaitFinished(0, 9); st.Status != receiver.Success || st.BootstrapToken != 6 {
		t.Fatalf("room 9: %s token %d, want Success with the source's token 6", st.Status, st.BootstrapToken)
	}
}

func TestContractEngineRegistration(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	set := pair.Plan(t)
	snap, err := receiver.SnapshotFor(set, 0)
	if err != nil {
		t.Fatal(err)
	}
	good := receivertest.ContractEngine(pair, 0)
	for _, tc := range []struct {
		name  string
		edit  func(*receiver.EngineInfo)
		code  receiver.ErrorCode
		parts []string
	}{
		{"another decode contract", func(e *receiver.EngineInfo) {
			e.Contract = editContract(t, e.Contract, `"page_count":64`, `"page_count":32`)
		},
			receiver.CodeContractMismatch, []string{"decodeContractSHA256", set.Layout.DecodeContractSHA256, "spec.cacheContracts.decode"}},
		{"v1 buffers", func(e *receiver.EngineInfo) {
			*e = receiver.EngineInfo{SessionID: e.SessionID, KVDataPtrs: []uint64{1 << 20}}
		},
			receiver.CodeWireMismatch, []string{"v1 buffer pointers", "cache-contract wire"}},
		{"a contract that does not decode", func(e *receiver.EngineInfo) {
			e.Contract = editContract(t, e.Contract, `"dtype":"bfloat16"`, `"dtype":"bf17"`)
		},
			receiver.CodeInvalidArgument, []string{"cacheLayout does not decode"}},
		{"not JSON", func(e *receiver.EngineInfo) { e.Contract = []byte(`{"plan":`) }, receiver.CodeInvalidArgument, []string{"cacheLayout", "MalformedJSON"}},
		{"too large", func(e *receiver.EngineInfo) {
			e.Contract = append([]byte(`{"x":"`), append(make([]byte, 256<<10), `"}`...)...)
		},
			receiver.CodeInvalidArgument, []string{"cacheLayout", "PayloadSize", "262144"}},
		{"arena at 0", func(e *receiver.EngineInfo) { e.ArenaPtr = 0 }, receiver.CodeInvalidArgument, []string{"kvDataPtr", "the arena pointer is 0"}},
		{"a session that is not host:port", func(e *receiver.EngineInfo) { e.SessionID = "nope" }, receiver.CodeInvalidArgument, []string{"sessionId"}},
		{"buffer pointers beside the arena", func(e *receiver.EngineInfo) { e.KVDataPtrs = []uint64{1} }, receiver.CodeInvalidArgument, []string{"not 1 KV and 0 state buffer pointers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := receivertest.StartAgent(t, &snap, 0, nil)
			info := good
			info.Contract = append([]byte(nil), good.Contract...)
			tc.edit(&info)
			err := m.RegisterEngine(info)
			if receiver.CodeOf(err) != tc.code {
				t.Fatalf("%v, want %s", err, tc.code)
			}
			for _, p := range tc.parts {
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("%v does not say %q", err, p)
				}
			}
			if m.EngineContract() != nil || m.EngineRegistered() {
				t.Fatal("a refused registration was kept")
			}
		})
	}
	m, _ := receivertest.StartAgent(t, &snap, 0, nil)
	if err := m.RegisterEngine(good); err != nil {
		t.Fatal(err)
	}
	if string(m.EngineContract()) != string(pair.DecodeContract) {
		t.Fatalf("EngineContract() is not the contract the engine registered")
	}
}

// A contract plan arriving while the engine is registered for the v1 wire,
// or with another decode contract, is refused; the agent keeps its plan.
func TestContractPlanRefusedForTheRegisteredEngine(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	snap, err := receiver.SnapshotFor(pair.Plan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	v1 := receivertest.Snapshot(t, fixtures.FragmentedP8D4(), 0)
	m, _ := receivertest.StartAgent(t, &v1, 0, nil)
	if err := m.RegisterEngine(receivertest.Engine(v1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPlan(snap); receiver.CodeOf(err) != receiver.CodeWireMismatch {
		t.Fatalf("a contract plan for a v1 engine: %v, want %s", err, receiver.CodeWireMismatch)
	}
	if m.PlanHash() != v1.Hash {
		t.Fatalf("the agent runs %s, want the plan it kept (%s)", m.PlanHash(), v1.Hash)
	}
	other := fixtures.LoadContractPair(t, "gqa-p2-d4")
	c, _ := receivertest.StartAgent(t, &snap, 0, nil)
	if err := c.RegisterEngine(receivertest.ContractEngine(pair, 0)); err != nil {
		t.Fatal(err)
	}
	otherSnap, err := receiver.SnapshotFor(other.Plan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	err = c.SetPlan(otherSnap)
	if receiver.CodeOf(err) != receiver.CodeContractMismatch || !strings.Contains(err.Error(), fmt.Sprint(otherSnap.Layout.DecodeContractSHA256)) {
		t.Fatalf("a plan for another decode contract: %v, want %s", err, receiver.CodeContractMismatch)
	}
}

// A contract plan that would complete a room on fewer than all its sources,
// or whose dummies are not its idle ranks, is refused before it runs.
func TestContractPlanChecks(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-replicas-p8-d2")
	for name, c := range map[string]struct {
		edit func(*receiver.PlanSnapshot)
		part string
	}{
		"fewer responses than sources": {func(s *receiver.PlanSnapshot) {
			s.Plan.RequiredPrefillResponseNum = 0
		}, "needs 0 prefill responses"},
		"an idle rank not met": {func(s *receiver.PlanSnapshot) {
			s.Plan.IdlePrefillTPRanks = s.Plan.IdlePrefillTPRanks[1:]
		}, "dummy targets [1 2 3 5 6 7] but idle prefill TP ranks [2 3 5 6 7]"},
		"a source turned dummy": {func(s *receiver.PlanSnapshot) {
			s.Plan.Targets[0].IsDummy = true
		}, "dummy targets [0 1 2 3 5 6 7]"},
	} {
		t.Run(name, func(t *testing.T) {
			snap, err := receiver.SnapshotFor(pair.Plan(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(&snap)
			if err := snap.Check(0); err == nil || !strings.Contains(err.Error(), c.part) {
				t.Fatalf("%v, want a refusal saying %q", err, c.part)
			}
		})
	}
	two := fixtures.LoadContractPair(t, "gqa-p4-d2") // decode rank 0 has two sources
	snap, err := receiver.SnapshotFor(two.Plan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	snap.Plan.RequiredPrefillResponseNum = 1
	if err := snap.Check(0); err == nil || !strings.Contains(err.Error(), "exactly its sources") {
		t.Fatalf("a plan completing on 1 of 2 sources: %v", err)
	}
}
