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
	"errors"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
)

// ErrorCode is a stable code for why a call on the Manager was refused. The
// local API maps codes to HTTP status codes without parsing messages.
type ErrorCode = wire.ErrorCode

const (
	// CodeInvalidArgument: a field of the call is out of range or malformed
	// (the message names it and the numbers).
	CodeInvalidArgument = wire.CodeInvalidArgument
	// CodeEngineNotRegistered: a room call came before the engine registered
	// its session and buffers; after an agent restart, register again.
	CodeEngineNotRegistered ErrorCode = "EngineNotRegistered"
	// CodeStreamEnded: a stream's call came after its registration was
	// replaced (or raced with the replacement); the stream ends.
	CodeStreamEnded ErrorCode = "StreamEnded"
	// CodeNoPlanLoaded: no route plan is loaded yet for this engine rank.
	CodeNoPlanLoaded ErrorCode = "NoPlanLoaded"
	// CodeRoomExists: the room number is open already.
	CodeRoomExists ErrorCode = "RoomExists"
	// CodeRoomNotFound: this agent process holds no such room (cleared, never
	// opened, or opened before the agent restarted).
	CodeRoomNotFound ErrorCode = "RoomNotFound"
	// CodeRoomAlreadyRequested: the room's request was sent (or queued) once.
	CodeRoomAlreadyRequested ErrorCode = "RoomAlreadyRequested"
	// CodeRoomFinished: the room already succeeded or failed.
	CodeRoomFinished ErrorCode = "RoomFinished"
	// CodeTooManyRooms: the agent holds its maximum of open rooms.
	CodeTooManyRooms ErrorCode = "TooManyRooms"
	// CodeFragmentOutOfBounds: a plan was refused because a fragment would
	// write outside the decode rank's buffers (a *FragmentError says which).
	CodeFragmentOutOfBounds ErrorCode = "FragmentOutOfBounds"
	// CodeWireMismatch: the engine registered for another wire than its
	// plan's (v1 buffer pointers for a contract plan, or the reverse), or a
	// request is not of its room's wire.
	CodeWireMismatch = wire.CodeWireMismatch
	// CodeContractMismatch: the engine's cache contract is not the decode
	// contract its plan was made for (decodeContractSHA256).
	CodeContractMismatch = wire.CodeContractMismatch
	// CodeManifestRefused: a block manifest does not fit the engine's
	// registered decode contract; the room fails and nothing is sent.
	CodeManifestRefused = wire.CodeManifestRefused
	// CodeAgentShuttingDown: the agent is stopping.
	CodeAgentShuttingDown ErrorCode = "AgentShuttingDown"
)

// Error is a refused call: a stable code and a message a person can act on.
type Error = wire.Error

func errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of a *Error (or a *FragmentError) in err's chain,
// or "" for other errors.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var f *FragmentError
	if errors.As(err, &f) {
		return CodeFragmentOutOfBounds
	}
	return ""
}
