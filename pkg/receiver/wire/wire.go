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

import (
	"context"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Wire is what one wire of the handshake does differently, for one route
// plan. The rest of the agent (rooms, deadlines, peer caches, status
// messages, the heartbeat's schedule) is the same on both and asks the
// plan's wire at each step that differs: at plan install, at the engine's
// registration, when a bootstrap server answers, when the agent registers
// with prefill ranks, for each room's request, and at each heartbeat. A
// Wire value lives as long as its route view and may keep what it prepared
// of the plan.
type Wire interface {
	// Name is the wire as plans, engine registrations and bootstrap answers
	// name it.
	Name() kvwire.Wire

	// CheckPlan holds a plan to the wire's rules before its targets are
	// read; SendsDummyTargets says whether the plan's dummy targets are sent
	// dummies as targets (else they are its idle ranks, added as such);
	// FinishView checks and prepares what the wire needs of the view once
	// its sends are known.
	CheckPlan(plan *transferplan.RoutePlan) error
	SendsDummyTargets() bool
	FinishView(v View) error

	// ValidateEngine checks an engine registration of this wire the way a
	// prefill rank will parse the registration built from it, and returns
	// what the wire keeps of it (the engine state); CheckEngine holds a
	// registration of this wire to a plan of this wire; EngineMismatch
	// refuses a registration of the other wire for this wire's plan v.
	ValidateEngine(info *EngineInfo, advertiseHost string) (any, error)
	CheckEngine(info *EngineInfo, engine any, v View) error
	EngineMismatch(v View) error

	// DecodeAnswer decodes a parallel-info answer of this wire; CheckAnswer
	// holds it to the plan; AnswerMismatch refuses an answer of the other
	// wire for this wire's plan.
	DecodeAnswer(body []byte) (any, error)
	CheckAnswer(h Host, v View, addr string, answer any) (*PrefillInfo, *RoomFailure)
	AnswerMismatch(v View, addr string) *RoomFailure

	// RegistrationFrames encodes this rank's registration with the prefill
	// ranks; Probe is one heartbeat of a live address (info: what it
	// answered when its ranks were registered), and returns the failure its
	// rooms fail with when what it answers now changed.
	RegistrationFrames(h Host, v View, info *EngineInfo, engine any) [][]byte
	Probe(ctx context.Context, h Host, addr string, info *PrefillInfo) (*RoomFailure, error)

	// CheckRequest refuses a room's request a prefill rank would not take
	// (or the other wire's); SendRequest sends a requested room to every
	// rank of its plan.
	CheckRequest(h Host, r Room, req *TransferRequest) error
	SendRequest(h Host, r Room, req *TransferRequest)
}

// Host is what a wire needs of the agent: where it listens, its push
// sockets, the bootstrap client, the engine's registration and failing a
// room. The agent implements it once for
// both wires.
type Host interface {
	// AdvertiseHost and StatusPort are where prefill ranks push statuses.
	AdvertiseHost() string
	StatusPort() int
	// Push is the agent's sockets to prefill ranks. It is the concrete
	// pool, not an interface, so that a room's frames, built on the wire's
	// stack, do not escape to the heap on their way to the socket.
	Push() *PushPool
	// FailRoom fails a room the wire could not send.
	FailRoom(r Room, reason FailureReason, message string)
	// Health is GET /health of a bootstrap address; Answer its parallel
	// info, decoded by the wire its keys name.
	Health(ctx context.Context, addr string) error
	Answer(ctx context.Context, addr string) (Answer, error)
	// Engine is what the current engine registration's wire kept of it
	// (ValidateEngine), nil without one.
	Engine() any
}

// View is a route plan as the agent prepared it: the plan, its layout and
// hash, and the prefill ranks a room sends to (the plan's targets in
// order, then any idle ranks).
type View interface {
	Plan() *transferplan.RoutePlan
	Layout() *transferplan.LayoutRecord
	PlanHash() string
	NumSends() int
	Target(i int) Target
	// RequiredResponses is the plan's required prefill responses,
	// ExpectedResponses the number of its sources.
	RequiredResponses() int
	ExpectedResponses() int
	// FragmentsFit holds the plan's fragments to the buffers an engine
	// registered (a prefill rank indexes them by buffer_index).
	FragmentsFit(info *EngineInfo) error
}

// Target is one prefill TP rank a room sends to.
type Target struct {
	Rank  int
	Dummy bool
	// DstInfo is the request's required_dst_info_num.
	DstInfo int
}

// Room is an open room as a wire sends it: its number, its prefill's
// bootstrap address and dp group, the endpoints of its view's sends in
// that group, and the engine registration it was opened under.
type Room interface {
	RoomID() int64
	DPGroup() int
	BootstrapAddr() string
	Endpoint(i int) string
	Session() string
	EngineState() any
	RouteView() View
}

// Answer is a parallel-info answer, decoded by the wire its keys name.
type Answer struct {
	Wire Wire
	// Value is what the answer's wire decoded (DecodeAnswer).
	Value any
}

// PrefillInfo is what a bootstrap address answered for engine_rank=-1,
// once its wire checked it against the plan: its sizes and what the wire
// keeps of the answer (Served: the contract wire's served contract, nil on
// v1).
type PrefillInfo struct {
	TPSize int
	DPSize int
	Served any
}
