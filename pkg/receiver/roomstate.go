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

import "fmt"

// RoomState is one room's decode-side state machine. It holds no sockets,
// clocks or locks, so every transition is testable on its own; the Manager
// serialises calls on it.
//
// Status only moves up; Failed and Success are terminal. Unlike the
// reference, a late Failed cannot turn a Success into a failure: the engine
// may already have consumed the KV cache of a successful room.
type RoomState struct {
	status    TransferPoll
	requested bool
	// required is how many distinct expected ranks must report Success.
	required  int
	responded responderSet
	count     int
	token     int64
	hasToken  bool
	spec      []int32
	failure   *RoomFailure
}

// Observation says what a status message did to a room; the Manager counts
// the ignored kinds as rejected messages.
type Observation uint8

const (
	ObservedRaised       Observation = iota // a non-final status raised the room (or kept it)
	ObservedCounted                         // a Success from a new expected rank; more are needed
	ObservedCompleted                       // the Success that completed the room
	ObservedFailed                          // an expected rank reported Failed; the room failed
	ObservedDuplicate                       // a second Success from the same rank: ignored
	ObservedFinished                        // the room was already terminal: ignored
	ObservedNotRequested                    // the room has not sent its request yet: ignored
	ObservedInvalid                         // not a TransferPoll value: ignored
)

// Ignored reports whether the message left the room unchanged because it
// could not have been meant for it.
func (o Observation) Ignored() bool { return o >= ObservedDuplicate }

// NewRoomState starts a room in Bootstrapping that completes when required
// of its expected ranks (numbered 0..expected-1 by the caller) report Success.
func NewRoomState(expected, required int) RoomState {
	return RoomState{status: Bootstrapping, required: required, token: -1, responded: newResponderSet(expected)}
}

// Status is the room's current TransferPoll.
func (s *RoomState) Status() TransferPoll { return s.status }

// Requested reports whether the room's request has been sent.
func (s *RoomState) Requested() bool { return s.requested }

// Failure is why the room failed, or nil.
func (s *RoomState) Failure() *RoomFailure { return s.failure }

// BootstrapToken is the first generated token reported for the room (-1 if
// none was).
func (s *RoomState) BootstrapToken() int64 { return s.token }

// SpecCandidates are the first speculative candidate ids reported, or nil.
func (s *RoomState) SpecCandidates() []int32 { return s.spec }

// Responses is how many distinct expected ranks reported Success.
func (s *RoomState) Responses() int { return s.count }

// MarkBootstrapped moves a bootstrapping room to Bootstrapped.
func (s *RoomState) MarkBootstrapped() bool { return s.raise(Bootstrapped) }

// MarkRequested records that the request went out; status messages are
// accepted from then on. It returns false if the room is terminal or was
// already requested.
func (s *RoomState) MarkRequested() bool {
	if s.status.Finished() || s.requested {
		return false
	}
	s.requested = true
	return true
}

// Fail fails an unfinished room; the first reason recorded is kept.
func (s *RoomState) Fail(reason FailureReason, message string) bool {
	if s.status.Finished() {
		return false
	}
	s.status, s.failure = Failed, &RoomFailure{Reason: reason, Message: message}
	return true
}

// Observe applies a status message from expected rank index idx (prefill TP
// rank rank). token -1 and nil spec mean "not reported".
func (s *RoomState) Observe(idx, rank int, status TransferPoll, token int64, spec []int32) Observation {
	switch {
	case !status.Valid():
		return ObservedInvalid
	case s.status.Finished():
		return ObservedFinished
	case !s.requested:
		return ObservedNotRequested
	case status == Failed:
		s.Fail(ReasonPrefillReportedFailure, fmt.Sprintf("prefill TP rank %d reported Failed: it could not send the KV cache (it might be dead)", rank))
		return ObservedFailed
	case status != Success:
		s.raise(status)
		return ObservedRaised
	case !s.responded.add(idx):
		return ObservedDuplicate
	}
	s.count++
	if token != -1 && !s.hasToken {
		s.token, s.hasToken = token, true
	}
	if spec != nil && s.spec == nil {
		s.spec = append(make([]int32, 0, len(spec)), spec...)
	}
	if s.count < s.required {
		return ObservedCounted
	}
	s.status = Success
	return ObservedCompleted
}

// raise moves an unfinished room up to status (never down, never to a
// terminal state: those have their own transitions).
func (s *RoomState) raise(status TransferPoll) bool {
	if s.status.Finished() || status <= s.status || status.Finished() {
		return false
	}
	s.status = status
	return true
}

// responderSet is a bitset of expected rank indices; one word covers the
// common fan-ins without allocating.
type responderSet struct {
	word  uint64
	words []uint64 // only when more than 64 ranks are expected
}

func newResponderSet(n int) responderSet {
	if n <= 64 {
		return responderSet{}
	}
	return responderSet{words: make([]uint64, (n+63)/64)}
}

// add sets bit i and reports whether it was newly set.
func (r *responderSet) add(i int) bool {
	if i < 0 {
		return false
	}
	w := &r.word
	if r.words != nil {
		if i/64 >= len(r.words) {
			return false
		}
		w = &r.words[i/64]
	} else if i >= 64 {
		return false
	}
	bit := uint64(1) << (uint(i) % 64)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
}
