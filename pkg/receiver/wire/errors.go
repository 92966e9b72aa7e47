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

package wire

import "fmt"

// ErrorCode is a stable code for why a call on the agent was refused. The
// local API maps codes to HTTP status codes without parsing messages;
// pkg/receiver holds the full list, the wires refuse with these.
type ErrorCode string

const (
	// CodeInvalidArgument: a field of the call is out of range or malformed
	// (the message names it and the numbers).
	CodeInvalidArgument ErrorCode = "InvalidArgument"
	// CodeWireMismatch: the engine registered for another wire than its
	// plan's (v1 buffer pointers for a contract plan, or the reverse), or a
	// request is not of its room's wire.
	CodeWireMismatch ErrorCode = "WireMismatch"
	// CodeContractMismatch: the engine's cache contract is not the decode
	// contract its plan was made for (decodeContractSHA256).
	CodeContractMismatch ErrorCode = "ContractMismatch"
	// CodeManifestRefused: a block manifest does not fit the engine's
	// registered decode contract; the room fails and nothing is sent.
	CodeManifestRefused ErrorCode = "ManifestRefused"
)

// Error is a refused call: a stable code and a message a person can act on.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf is an Error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FailureReason is a stable code for why a room failed. The local API
// reports it beside the human message, and metrics count failures by it;
// pkg/receiver holds the full list, the wires fail rooms with these.
type FailureReason string

const (
	// ReasonParallelInfoUnavailable: GET /route?engine_rank=-1 failed (HTTP
	// error, timeout, bad status or a body that is not the expected JSON).
	ReasonParallelInfoUnavailable FailureReason = "ParallelInfoUnavailable"
	// ReasonLayoutMismatch: the prefill's live parallel info differs from the
	// layout the plan was made for; rooms for that address are refused.
	ReasonLayoutMismatch FailureReason = "LayoutMismatch"
	// ReasonSendFailed: a registration or request could not be queued to a
	// prefill rank's socket.
	ReasonSendFailed FailureReason = "SendFailed"
	// ReasonWireMismatch: the prefill's bootstrap server answered another
	// wire than the plan's (v1 item lengths for a contract plan, or a
	// cache_layout for a v1 plan), or changed wire while rooms were open.
	ReasonWireMismatch FailureReason = "WireMismatch"
	// ReasonContractMismatch: the prefill's live cache contract is not the
	// one the plan was made for (the message names the first differing
	// field and both values); rooms for that address are refused.
	ReasonContractMismatch FailureReason = "ContractMismatch"
	// ReasonContractChanged: the prefill's bootstrap server answered another
	// cache contract (or sizes) than when the room was bootstrapped: its
	// ranks no longer hold the registration the room was sent under.
	ReasonContractChanged FailureReason = "ContractChanged"
)

// RoomFailure is why one room failed: a stable reason and a sentence naming
// the address, ranks and numbers involved.
type RoomFailure struct {
	Reason  FailureReason
	Message string
}

func (f *RoomFailure) Error() string { return string(f.Reason) + ": " + f.Message }

// ShortHash is a plan or contract hash as messages name it.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "without hash"
	}
	return h
}
