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
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

func TestBootstrapFaultsFailOnlyThatRoom(t *testing.T) {
	cases := []struct {
		name   string
		fault  prefillpeer.BootstrapFault
		reason receiver.FailureReason
		parts  []string
	}{
		{"parallel info 500", prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.Fault500}, receiver.ReasonParallelInfoUnavailable, []string{"parallel info", "status 500"}},
		{"parallel info hangs", prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultHang}, receiver.ReasonParallelInfoUnavailable, []string{"no answer within 300ms"}},
		{"parallel info garbage", prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultGarbage}, receiver.ReasonParallelInfoUnavailable, []string{"parallel info", string(kvwire.ReasonMalformedJSON)}},
		{"rank address 500", prefillpeer.BootstrapFault{RankAddress: prefillpeer.Fault500}, receiver.ReasonTargetInfoUnavailable, []string{"prefill TP rank 0 in dp group 0", "status 500"}},
		{"rank address garbage", prefillpeer.BootstrapFault{RankAddress: prefillpeer.FaultGarbage}, receiver.ReasonTargetInfoUnavailable, []string{"prefill TP rank 0", string(kvwire.ReasonMalformedJSON)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			timeout := 3 * time.Second // generous: only the hanging server may time out
			if c.fault.ParallelInfo == prefillpeer.FaultHang {
				timeout = 300 * time.Millisecond
			}
			s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(cfg *receiver.Config) { cfg.HTTPTimeout = timeout })
			s.Peer.SetBootstrapFault(c.fault)
			s.Open(0, 1)
			s.ExpectFailure(0, 1, c.reason, append(c.parts, s.Peer.BootstrapAddr())...)
			if s.Counter(0, receivertest.MetricRoomFailures, "reason", string(c.reason)) != 1 {
				t.Fatalf("failure not counted")
			}
			// the failure was not cached: once the server recovers, rooms work
			s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{})
			s.OpenAndRequest(2)
			if st := s.WaitFinished(0, 2); st.Status != receiver.Success {
				t.Fatalf("room after recovery: %+v", st)
			}
		})
	}
}

func TestBootstrapTimeoutBoundsTheWholeBootstrap(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) {
		c.HTTPTimeout = 5 * time.Second
		c.BootstrapTimeout = 300 * time.Millisecond
	})
	s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{RankAddress: prefillpeer.FaultHang})
	s.Open(0, 3)
	s.ExpectFailure(0, 3, receiver.ReasonBootstrapTimeout, "did not finish bootstrapping", "within 300ms")
}

func TestPrefillReportsFailed(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{1}, nil, nil)
	s.Peer.ScriptRank(8, 3, prefillpeer.Failure())
	s.Peer.ScriptRank(8, 2, prefillpeer.Success(1).After(100*time.Millisecond))
	s.OpenAndRequest(8)
	s.ExpectFailure(0, 8, receiver.ReasonPrefillReportedFailure, "prefill TP rank 3 reported Failed")
	// the other target's later Success must not revive the room
	s.WaitCounter(0, 1, receivertest.MetricStatusMessagesRejected, "reason", receiver.RejectRoomFinished)
	if st, _ := s.Agents[0].Status(8); st.Status != receiver.Failed {
		t.Fatalf("room revived: %+v", st)
	}
}

func TestSilentPrefillTimesOut(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) { c.WaitingTimeout = 300 * time.Millisecond })
	s.Peer.Script(4, prefillpeer.Silence())
	s.OpenAndRequest(4)
	s.ExpectFailure(0, 4, receiver.ReasonWaitingTimeout, "did not finish within 300ms", "state Bootstrapped", "0 of 2 prefill ranks reported Success")
}

func TestBootstrappedRoomWithoutRequestTimesOut(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) { c.WaitingTimeout = 200 * time.Millisecond })
	s.Open(0, 6)
	s.ExpectFailure(0, 6, receiver.ReasonWaitingTimeout, "its request was not sent")
}

func TestSweeperFailsUnpolledRooms(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) { c.WaitingTimeout = 100 * time.Millisecond })
	s.Peer.Script(5, prefillpeer.Silence())
	s.OpenAndRequest(5)
	s.WaitCounter(0, 1, receivertest.MetricRoomFailures, "reason", string(receiver.ReasonWaitingTimeout)) // nobody polls: the sweeper must act
}

func TestPrefillDyingMidRoomFailsItsRooms(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) {
		c.HeartbeatFloor = 10 * time.Millisecond
		c.HeartbeatInterval = 100 * time.Millisecond
		c.HTTPTimeout = time.Second // a live server answers; a dead one refuses at once
	})
	s.OpenAndRequest(30) // a room that completes before the death
	s.WaitFinished(0, 30)
	s.Peer.Script(31, prefillpeer.Death())
	s.OpenAndRequest(31)
	s.ExpectFailure(0, 31, receiver.ReasonLostConnection, "lost connection with prefill at "+s.Peer.BootstrapAddr(), "2 consecutive heartbeats failed")
	if st, _ := s.Agents[0].Status(30); st.Status != receiver.Success {
		t.Fatalf("a finished room was failed by the lost connection: %+v", st)
	}
	if s.Counter(0, receivertest.MetricHeartbeatMisses) < 2 {
		t.Fatalf("heartbeat misses not counted")
	}
	// the caches were dropped: a new room asks the (dead) bootstrap server again
	if err := s.Agents[0].Open(s.Peer.BootstrapAddr(), 32); err != nil {
		t.Fatal(err)
	}
	s.ExpectFailure(0, 32, receiver.ReasonParallelInfoUnavailable, s.Peer.BootstrapAddr())
}

// Only consecutive misses drop a prefill: a bootstrap server that misses
// every other health check stays in use, its rooms open.
func TestScatteredHeartbeatMissesKeepThePrefill(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) {
		c.HeartbeatFloor = 10 * time.Millisecond
		c.HeartbeatInterval = 20 * time.Millisecond
		c.HeartbeatMisses = 2
		c.WaitingTimeout = time.Minute
	})
	s.Peer.Script(33, prefillpeer.Silence())
	s.OpenAndRequest(33)
	// checks are counted from the peer's start: from now on they alternate
	s.Peer.SetBootstrapFault(prefillpeer.BootstrapFault{HealthSequence: []prefillpeer.Fault{prefillpeer.Fault500, prefillpeer.NoFault}})
	testutil.Eventually(t, receivertest.WaitTimeout, "four misses, each followed by an answer", func() error {
		if n := s.Counter(0, receivertest.MetricConnectionsLost); n != 0 {
			t.Fatalf("%v bootstrap addresses dropped after misses that were never consecutive", n)
		}
		if n := s.Counter(0, receivertest.MetricHeartbeatMisses); n < 4 {
			return fmt.Errorf("%v heartbeat misses, want 4", n)
		}
		return nil
	})
	if st, _ := s.Agents[0].Status(33); st.Status.Finished() {
		t.Fatalf("room 33: %+v; the prefill never missed two checks in a row", st)
	}
}

func TestForgedAndMalformedStatusesAreIgnoredAndCounted(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, func(c *receiver.Config) { c.WaitingTimeout = 2 * time.Second })
	s.Peer.Script(40, prefillpeer.Silence())
	s.OpenAndRequest(40)
	ep := receivertest.StatusEndpoint(t, s.Agents[0])
	forge := func(frames [][]byte) {
		if err := prefillpeer.SendFrames(ep, frames); err != nil {
			t.Fatal(err)
		}
	}
	status := func(room int64, st kvwire.TransferPoll, rank int) [][]byte {
		m := kvwire.Status{Room: room, State: st, PrefillTPRank: rank, BootstrapToken: 99}
		return m.Frames()
	}
	forge(status(40, kvwire.Success, 5))  // rank 5 is decode rank 0's target? no: targets are 0 and 1
	forge(status(40, kvwire.Failed, 7))   // a Failed from a stranger must not fail the room
	forge(status(999, kvwire.Success, 0)) // no such room
	forge([][]byte{[]byte("40")})         // too few frames
	forge([][]byte{[]byte("40"), []byte("5"), []byte("x")})
	forge([][]byte{[]byte("40"), []byte("9"), []byte("0")}) // not a TransferPoll
	forge(append(status(40, kvwire.Success, 0), nil))       // one frame more than any status: dropped unread
	big := bytes.Repeat([]byte("7"), 40<<10)                // each frame under libzmq's cap, together over it
	forge([][]byte{[]byte("40"), []byte("2"), []byte("0"), big, big})
	forge(status(40, kvwire.Success, 0)) // the expected rank: counted
	forge(status(40, kvwire.Success, 0)) // the same rank again: a duplicate
	for reason, want := range map[string]float64{
		receiver.RejectUnexpectedRank: 2, receiver.RejectUnknownRoom: 1, receiver.RejectDuplicateSuccess: 1,
		string(kvwire.ReasonFrameCount): 2, string(kvwire.ReasonNotAnInteger): 1, string(kvwire.ReasonUnknownStatus): 1,
		string(kvwire.ReasonPayloadSize): 1,
	} {
		s.WaitCounter(0, want, receivertest.MetricStatusMessagesRejected, "reason", reason)
	}
	st, _ := s.Agents[0].Status(40)
	if st.Status != receiver.Bootstrapped || st.BootstrapToken != 99 {
		t.Fatalf("room 40: %+v; one of two responses counted, token kept, nothing else changed", st)
	}
	forge(status(40, kvwire.Success, 1))
	if st := s.WaitFinished(0, 40); st.Status != receiver.Success {
		t.Fatalf("room 40 after both expected ranks: %+v", st)
	}
}

func TestLayoutMismatchRefusesTheAddress(t *testing.T) {
	cases := []struct {
		name  string
		mut   func(*prefillpeer.Config)
		parts []string
	}{
		{"prefill TP", func(c *prefillpeer.Config) {
			c.WorldSize = 4
			c.Buffers.KVItemLens = []int64{256, 256, 256, 256}
			c.Buffers.KVUnitLens = []int64{128, 128, 128, 128}
		}, []string{"prefill_tp_size is 4, the plan was made for prefill tensorParallelSize 8"}},
		{"item lens", func(c *prefillpeer.Config) {
			c.Buffers.KVItemLens = []int64{128, 128, 256, 128}
		}, []string{"kv_item_lens is 256 at buffer 2, the plan was made for prefillKVItemLens[2] = 128"}},
		{"L1.5 flag", func(c *prefillpeer.Config) { c.EnableMLAL15Cache = true }, []string{"enable_mla_l1_5_cache is true, the plan was made for mlaL15Cache false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, c.mut, nil)
			for room := int64(1); room <= 3; room++ {
				s.Open(0, room)
				s.ExpectFailure(0, room, receiver.ReasonLayoutMismatch, append(c.parts, "prefill at "+s.Peer.BootstrapAddr())...)
			}
			if n := s.Peer.BootstrapCounts().ParallelInfo; n != 1 {
				t.Fatalf("parallel info asked %d times; a refusal is cached", n)
			}
			for _, r := range s.Peer.Ranks() {
				if c := r.Counts(); c.Registrations != 0 || c.Requests != 0 {
					t.Fatalf("prefill rank %d was contacted despite the mismatch: %+v", r.EngineRank, c)
				}
			}
		})
	}
}
