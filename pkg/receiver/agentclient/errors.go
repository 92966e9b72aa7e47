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

package agentclient

import (
	"errors"
	"fmt"
	"net"
)

// UnavailableError is a call that never got an answer: the socket is
// missing, nothing listens on it, the connection broke, or the agent did
// not answer within the call's timeout.
type UnavailableError struct {
	// Endpoint is where the agent was looked for ("unix:/run/pdtopo/rank-0.sock").
	Endpoint string
	// Call is the method and path ("POST /v1/rooms").
	Call string
	Err  error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("pdtopo agent at %s did not answer %s: %v (is the pdtopo-agent sidecar running and serving this engine rank?)", e.Endpoint, e.Call, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Timeout reports whether the call ran out of time (rather than finding
// no agent at all).
func (e *UnavailableError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, errDeadline)
}

// APIError is a call the agent answered with an error: the HTTP status, the
// agent's stable code (receiver.ErrorCode or a localapi Code* constant) and
// its message.
type APIError struct {
	Call       string
	HTTPStatus int
	Code       string
	Message    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("pdtopo agent refused %s: %d %s: %s", e.Call, e.HTTPStatus, e.Code, e.Message)
}

// CodeOf returns the agent's code of an *APIError in err's chain, or "".
func CodeOf(err error) string {
	var e *APIError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TransferError is a failed room, as the reference engine's KVTransferError
// carries it: the room, why it failed, and the prefill it was bound to.
type TransferError struct {
	BootstrapRoom int64
	// FailureCode is the agent's stable reason (receiver.FailureReason, or
	// one of this package's Failure* codes); empty when the room did not
	// fail on this rank.
	FailureCode    string
	FailureReason  string
	RemoteEndpoint string
}

func (e *TransferError) Error() string {
	if e.RemoteEndpoint != "" {
		return fmt.Sprintf("KVTransferError(bootstrap_room=%d, remote_endpoint=%s): %s", e.BootstrapRoom, e.RemoteEndpoint, e.FailureReason)
	}
	return fmt.Sprintf("KVTransferError(bootstrap_room=%d): %s", e.BootstrapRoom, e.FailureReason)
}

// Failure codes of rooms that failed in the client rather than in the agent.
const (
	// FailureAgentUnavailable: the agent could not be reached for the room.
	FailureAgentUnavailable = "AgentUnavailable"
	// FailureAgentRefused: the agent refused a call for the room (the
	// message carries the agent's own code).
	FailureAgentRefused = "AgentRefused"
	// FailureAgentStreamLost: the rank's event stream ended before the room
	// finished (the agent crashed, or the connection broke): its outcome is
	// unknown.
	FailureAgentStreamLost = "AgentStreamLost"
	// FailureOnAnotherRank: the room did not fail on this rank; the engine's
	// ranks agreed it failed (the reference's all-reduce of polls).
	FailureOnAnotherRank = "FailedOnAnotherRank"
)
