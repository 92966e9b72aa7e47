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

package kvwire

import "math"

const (
	// StatusFrames is the number of frames a status message is sent with.
	StatusFrames = 5
	// MinStatusFrames: bootstrap_token and spec_candidate_ids may be missing.
	MinStatusFrames = 3
	// NoBootstrapToken is the bootstrap_token of a status that carries none.
	NoBootstrapToken = -1
)

// Status is what a prefill rank tells a decode rank about a room:
//
//	[room, status, prefill_tp_rank, bootstrap_token, spec_candidate_ids (i32 LE)]
type Status struct {
	Room  int64
	State TransferPoll
	// PrefillTPRank is the sender's TP rank within its dp group.
	PrefillTPRank int
	// BootstrapToken is the first generated token, or NoBootstrapToken.
	BootstrapToken int64
	// SpecCandidateIDs is nil when the message carries none (an empty list
	// and no list are the same bytes on the wire).
	SpecCandidateIDs []int32
}

// Frames encodes the status with all five frames, as the reference does.
func (s *Status) Frames() [][]byte {
	buf := make([]byte, 0, 3*20+4+4*len(s.SpecCandidateIDs))
	var ends [StatusFrames]int
	buf = AppendDecimal(buf, s.Room)
	ends[0] = len(buf)
	buf = AppendDecimal(buf, int64(s.State))
	ends[1] = len(buf)
	buf = AppendDecimal(buf, int64(s.PrefillTPRank))
	ends[2] = len(buf)
	buf = AppendDecimal(buf, s.BootstrapToken)
	ends[3] = len(buf)
	buf = AppendI32s(buf, s.SpecCandidateIDs)
	ends[4] = len(buf)
	return SliceFrames(make([][]byte, 0, StatusFrames), buf, ends[:])
}

// DecodeStatus parses a status message of three to five frames; a missing
// bootstrap_token reads as NoBootstrapToken and missing or empty candidates
// as nil. Any sender can reach a decode rank's status socket, so a caller
// must still check that the room and rank are ones it expects.
func DecodeStatus(frames [][]byte) (Status, error) {
	s := Status{BootstrapToken: NoBootstrapToken}
	if n := len(frames); n < MinStatusFrames || n > StatusFrames {
		return Status{}, FieldError(KindStatus, "", ReasonFrameCount, "%d frames, want %d to %d", n, MinStatusFrames, StatusFrames)
	}
	r := FrameReader{KindStatus, frames}
	var err *Error
	if s.Room, err = r.Int64(0, "room"); err != nil {
		return Status{}, err
	}
	state, err := r.Int64(1, "status")
	if err != nil {
		return Status{}, err
	}
	if s.State = TransferPoll(state); state < 0 || !s.State.Valid() {
		return Status{}, FrameError(KindStatus, 1, "status", ReasonUnknownStatus, "%d is not a TransferPoll state (0..5)", state)
	}
	rank, err := r.IntIn(2, "prefill_tp_rank", 0, math.MaxInt32)
	if err != nil {
		return Status{}, err
	}
	s.PrefillTPRank = int(rank)
	if len(frames) > 3 {
		if s.BootstrapToken, err = r.IntIn(3, "bootstrap_token", NoBootstrapToken, maxInt64); err != nil {
			return Status{}, err
		}
	}
	if len(frames) > 4 {
		if s.SpecCandidateIDs, err = r.I32s(4, "spec_candidate_ids"); err != nil {
			return Status{}, err
		}
	}
	return s, nil
}
