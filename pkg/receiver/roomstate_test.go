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

package receiver

import (
	"slices"
	"testing"
)

func requestedRoom(expected, required int) RoomState {
	s := NewRoomState(expected, required)
	s.MarkBootstrapped()
	s.MarkRequested()
	return s
}

func TestRoomStateCompletesAfterEveryExpectedRank(t *testing.T) {
	s := requestedRoom(2, 2)
	if got := s.Observe(0, 4, Success, 42, []int32{7, 8}); got != ObservedCounted {
		t.Fatalf("first success: %v, want counted", got)
	}
	if s.Status() != Bootstrapped {
		t.Fatalf("status after one of two: %v", s.Status())
	}
	if got := s.Observe(0, 4, Success, 43, nil); got != ObservedDuplicate {
		t.Fatalf("same rank again: %v, want duplicate", got)
	}
	if got := s.Observe(1, 5, Success, 99, []int32{1}); got != ObservedCompleted {
		t.Fatalf("second rank: %v, want completed", got)
	}
	if s.Status() != Success || s.BootstrapToken() != 42 || !slices.Equal(s.SpecCandidates(), []int32{7, 8}) {
		t.Fatalf("got %v token %d spec %v; want Success, the first token 42 and first candidates", s.Status(), s.BootstrapToken(), s.SpecCandidates())
	}
}

func TestRoomStateKeepsFirstTokenEvenFromLaterRank(t *testing.T) {
	s := requestedRoom(2, 2)
	s.Observe(0, 0, Success, -1, nil)
	s.Observe(1, 1, Success, 5, []int32{3})
	if s.BootstrapToken() != 5 || !slices.Equal(s.SpecCandidates(), []int32{3}) {
		t.Fatalf("token %d spec %v, want the first reported ones", s.BootstrapToken(), s.SpecCandidates())
	}
}

func TestRoomStateFailedIsStickyAndFirstReasonWins(t *testing.T) {
	s := requestedRoom(1, 1)
	if got := s.Observe(0, 3, Failed, -1, nil); got != ObservedFailed {
		t.Fatalf("failed: %v", got)
	}
	if s.Fail(ReasonWaitingTimeout, "later") {
		t.Fatal("a failed room failed again")
	}
	if got := s.Observe(0, 3, Success, 1, nil); got != ObservedFinished || s.Status() != Failed {
		t.Fatalf("success after failure: %v, status %v", got, s.Status())
	}
	if f := s.Failure(); f == nil || f.Reason != ReasonPrefillReportedFailure {
		t.Fatalf("failure %v, want %s", f, ReasonPrefillReportedFailure)
	}
}

func TestRoomStateSuccessIsFinal(t *testing.T) {
	s := requestedRoom(1, 1)
	s.Observe(0, 0, Success, -1, nil)
	if s.Fail(ReasonLostConnection, "x") || s.Observe(0, 0, Failed, -1, nil) != ObservedFinished || s.Status() != Success {
		t.Fatalf("a successful room changed: %v", s.Status())
	}
}

func TestRoomStateOnlyMovesUp(t *testing.T) {
	s := requestedRoom(1, 1)
	s.Observe(0, 0, Transferring, -1, nil)
	s.Observe(0, 0, WaitingForInput, -1, nil)
	s.Observe(0, 0, Bootstrapping, -1, nil)
	if s.Status() != Transferring {
		t.Fatalf("status %v, want Transferring", s.Status())
	}
}

func TestRoomStateIgnoresMessagesBeforeRequest(t *testing.T) {
	s := NewRoomState(1, 1)
	s.MarkBootstrapped()
	if got := s.Observe(0, 0, Success, 1, nil); got != ObservedNotRequested || s.Status() != Bootstrapped {
		t.Fatalf("success before request: %v, status %v", got, s.Status())
	}
	if got := s.Observe(0, 0, TransferPoll(9), 1, nil); got != ObservedInvalid {
		t.Fatalf("status 9: %v", got)
	}
}

func TestRoomStateManyExpectedRanks(t *testing.T) {
	s := requestedRoom(130, 130)
	for i := range 130 {
		want := ObservedCounted
		if i == 129 {
			want = ObservedCompleted
		}
		if got := s.Observe(i, i, Success, -1, nil); got != want {
			t.Fatalf("rank %d: %v, want %v", i, got, want)
		}
	}
	if s.Observe(200, 200, Success, -1, nil) != ObservedFinished {
		t.Fatal("out-of-range index on a finished room")
	}
}

func TestResponderSetRejectsOutOfRange(t *testing.T) {
	for _, n := range []int{1, 100} {
		r := newResponderSet(n)
		if r.add(-1) || r.add(1<<20) {
			t.Fatalf("n=%d: out-of-range index accepted", n)
		}
	}
}
