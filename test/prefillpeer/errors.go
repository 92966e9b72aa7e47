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

import "fmt"

// ErrorReason is a stable code for something wrong a rank found in what it
// was sent.
type ErrorReason string

const (
	// ReasonMalformedMessage: the frames did not decode (Err is a *kvwire.Error).
	ReasonMalformedMessage ErrorReason = "MalformedMessage"
	// ReasonUnregisteredSession: a non-dummy request from a session that has
	// not registered its memory. The reference's transfer thread dies on it
	// (KeyError); the peer records it and stays silent for the room.
	ReasonUnregisteredSession ErrorReason = "UnregisteredSession"
	// ReasonPointerCount: the registration's kv or state pointer count does
	// not match this rank's buffers; the reference would index past it.
	ReasonPointerCount ErrorReason = "PointerCount"
	// ReasonFragmentSrcRank: a fragment names another prefill rank as source.
	ReasonFragmentSrcRank ErrorReason = "FragmentSrcRank"
	// ReasonFragmentBuffer: a fragment names a buffer this rank does not have.
	ReasonFragmentBuffer ErrorReason = "FragmentBuffer"
	// ReasonFragmentStride: a fragment's source stride is not the item length.
	ReasonFragmentStride ErrorReason = "FragmentStride"
	// ReasonFragmentOutsideItem: a fragment's byte range leaves the item.
	ReasonFragmentOutsideItem ErrorReason = "FragmentOutsideItem"
	// ReasonFragmentUnitAlignment: a fragment's range is not whole units.
	ReasonFragmentUnitAlignment ErrorReason = "FragmentUnitAlignment"
	// ReasonFragmentDstRank: fragments of one request name different decode ranks.
	ReasonFragmentDstRank ErrorReason = "FragmentDstRank"
	// ReasonWrongBytes: executing a request's fragments (Config.Transfer)
	// writes a byte where the decode rank's layout wants another one.
	ReasonWrongBytes ErrorReason = "WrongBytes"
	// ReasonNeverAnswers: a room's collected requests mix dummies with real
	// ones, so the reference would wait for more real ones than
	// required_dst_info_num allows and never send a status.
	ReasonNeverAnswers ErrorReason = "NeverAnswers"
	// ReasonStatusNotSent: a status could not be queued to the decode endpoint.
	ReasonStatusNotSent ErrorReason = "StatusNotSent"
	// ReasonRegistrationRefused: on the contract wire, a registration the
	// engine's prefill refuses (malformed, a contract that does not parse or
	// plan, the wrong prefill rank, a conflicting one); the session's rooms
	// fail.
	ReasonRegistrationRefused ErrorReason = "RegistrationRefused"
	// ReasonPreAllocationRefused: on the contract wire, a pre-allocation the
	// engine's prefill refuses (its manifest, its kind, its session, the
	// room's fan-out); the room fails.
	ReasonPreAllocationRefused ErrorReason = "PreAllocationRefused"
)

// RankError is one thing wrong a rank found.
type RankError struct {
	EngineRank int
	// Room is the room concerned, or NoRoom.
	Room   int64
	Reason ErrorReason
	Detail string
	Err    error
}

// NoRoom marks a RankError that concerns no room (a registration).
const NoRoom = -1 << 63

func (e *RankError) Error() string {
	room := ""
	if e.Room != NoRoom {
		room = fmt.Sprintf(" room %d", e.Room)
	}
	return fmt.Sprintf("prefill engine rank %d%s: %s: %s", e.EngineRank, room, e.Reason, e.Detail)
}

func (e *RankError) Unwrap() error { return e.Err }
