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

import "github.com/pdtopo/pdtopo/pkg/receiver/wire"

// FailureReason is a stable code for why a room failed. The local API reports
// it beside the human message, and metrics count failures by it.
type FailureReason = wire.FailureReason

const (
	// ReasonParallelInfoUnavailable: GET /route?engine_rank=-1 failed (HTTP
	// error, timeout, bad status or a body that is not the expected JSON).
	ReasonParallelInfoUnavailable = wire.ReasonParallelInfoUnavailable
	// ReasonTargetInfoUnavailable: the address of a prefill rank could not be
	// fetched from the bootstrap server.
	ReasonTargetInfoUnavailable FailureReason = "TargetInfoUnavailable"
	// ReasonLayoutMismatch: the prefill's live parallel info differs from the
	// layout the plan was made for; rooms for that address are refused.
	ReasonLayoutMismatch = wire.ReasonLayoutMismatch
	// ReasonSendFailed: a registration or request could not be queued to a
	// prefill rank's socket.
	ReasonSendFailed = wire.ReasonSendFailed
	// ReasonPrefillReportedFailure: an expected prefill rank reported Failed.
	ReasonPrefillReportedFailure FailureReason = "PrefillReportedFailure"
	// ReasonBootstrapTimeout: the room did not finish bootstrapping in time.
	ReasonBootstrapTimeout FailureReason = "BootstrapTimeout"
	// ReasonWaitingTimeout: the room did not finish in time after it was
	// bootstrapped (whatever state it was in).
	ReasonWaitingTimeout FailureReason = "WaitingTimeout"
	// ReasonLostConnection: the bootstrap server missed too many heartbeats.
	ReasonLostConnection FailureReason = "LostConnection"
	// ReasonShutdown: the agent stopped while the room was unfinished.
	ReasonShutdown FailureReason = "Shutdown"
	// ReasonEngineReregistered: the engine registered again with other
	// buffers or another session (it restarted) while the room was
	// unfinished; the room belonged to the old registration.
	ReasonEngineReregistered FailureReason = "EngineReregistered"
	// ReasonStreamReplaced: the engine rank opened a new event stream; the
	// rooms of the old one ended with it.
	ReasonStreamReplaced FailureReason = "StreamReplaced"
	// ReasonStreamClosed: the event stream that opened the room closed or
	// broke (the engine exited, or its connection did).
	ReasonStreamClosed FailureReason = "StreamClosed"
	// ReasonStreamStalled: the engine did not read its event stream for the
	// stream write timeout; the agent closed it.
	ReasonStreamStalled FailureReason = "StreamStalled"
	// ReasonWireMismatch: the prefill's bootstrap server answered another
	// wire than the plan's (v1 item lengths for a contract plan, or a
	// cache_layout for a v1 plan), or changed wire while rooms were open.
	ReasonWireMismatch = wire.ReasonWireMismatch
	// ReasonContractMismatch: the prefill's live cache contract is not the
	// one the plan was made for (the message names the first differing
	// field and both values); rooms for that address are refused.
	ReasonContractMismatch = wire.ReasonContractMismatch
	// ReasonContractChanged: the prefill's bootstrap server answered another
	// cache contract (or sizes) than when the room was bootstrapped: its
	// ranks no longer hold the registration the room was sent under.
	ReasonContractChanged = wire.ReasonContractChanged
	// ReasonManifestRefused: the engine's block manifest does not fit the
	// decode contract it registered (a block outside the arena, a wrong
	// block count, …); nothing of the room was sent.
	ReasonManifestRefused FailureReason = "ManifestRefused"
	// ReasonStreamProtocol: the engine sent something on its stream that is
	// not the protocol (a line that is not an operation, or too long); the
	// agent closed it.
	ReasonStreamProtocol FailureReason = "StreamProtocolError"
)

// RoomFailure is why one room failed: a stable reason and a sentence naming
// the address, ranks and numbers involved.
type RoomFailure = wire.RoomFailure
