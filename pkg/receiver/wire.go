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
	"context"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// wire is what one wire of the handshake does differently, for one route
// plan: tokenspeed's v1 wire (v1Wire, docs/wire.md) or its cache-contract
// wire (contractWire, docs/wire.md). The rest of the agent (rooms,
// deadlines, peer caches, status messages, the heartbeat's schedule) is the
// same on both and asks the plan's wire at each step that differs: at plan
// install, at the engine's registration, when a bootstrap server answers,
// when the agent registers with prefill ranks, for each room's request, and
// at each heartbeat. A wire value lives as long as its route view and may
// keep what it prepared of the plan.
type wire interface {
	// name is the wire as plans, engine registrations and bootstrap answers
	// name it.
	name() kvwire.Wire

	// checkPlan holds a plan to the wire's rules before its targets are
	// read; sendsDummyTargets says whether the plan's dummy targets are sent
	// dummies as targets (else they are its idle ranks, added as such);
	// finishView checks and prepares what the wire needs of the view once
	// its sends are known.
	checkPlan(plan *transferplan.RoutePlan) error
	sendsDummyTargets() bool
	finishView(v *routeView) error

	// validateEngine checks an engine registration of this wire the way a
	// prefill rank will parse the registration built from it, and returns
	// what the wire keeps of it (engineWire); checkEngine holds a
	// registration of this wire to a plan of this wire; engineMismatch
	// refuses a registration of the other wire for this wire's plan v.
	validateEngine(info EngineInfo, advertiseHost string) (any, error)
	checkEngine(reg *registration, v *routeView) error
	engineMismatch(v *routeView) error

	// decodeAnswer decodes a parallel-info answer of this wire; checkAnswer
	// holds it to the plan; answerMismatch refuses an answer of the other
	// wire for this wire's plan.
	decodeAnswer(body []byte) (any, error)
	checkAnswer(m *Manager, v *routeView, addr string, answer any) (*prefillInfo, *RoomFailure)
	answerMismatch(v *routeView, addr string) *RoomFailure

	// registrationFrames encodes this rank's registration with the prefill
	// ranks; probe is one heartbeat of a live address.
	registrationFrames(m *Manager, v *routeView, reg *registration) [][]byte
	probe(ctx context.Context, m *Manager, t *peerTable, p livePeer) error

	// checkRequest refuses a room's request a prefill rank would not take
	// (or the other wire's); sendRequest sends a requested room to every
	// rank of its plan.
	checkRequest(m *Manager, e *roomEntry, req *TransferRequest) error
	sendRequest(m *Manager, e *roomEntry, req *TransferRequest)
}

// newWire is the one place a wire is chosen by its name: a plan
// snapshot's layout names it, an engine registration by its kind
// (EngineInfo.wireName), a bootstrap server by its answer's keys
// (kvwire.AnswerWire). Any name but the cache-contract wire's is v1, as
// plans made before the contract wire name none.
func newWire(name kvwire.Wire) wire {
	if name == kvwire.WireCacheContract {
		return &contractWire{}
	}
	return &v1Wire{}
}

// bootstrapAnswer is a parallel-info answer, decoded by the wire its keys
// name.
type bootstrapAnswer struct {
	wire wire
	// value is what the answer's wire decoded (decodeAnswer).
	value any
}

// decodeBootstrapAnswer tells the answer's wire and decodes it with that
// wire's decoder.
func decodeBootstrapAnswer(body []byte) (bootstrapAnswer, error) {
	name, err := kvwire.AnswerWire(body)
	if err != nil {
		return bootstrapAnswer{}, err
	}
	w := newWire(name)
	v, err := w.decodeAnswer(body)
	return bootstrapAnswer{wire: w, value: v}, err
}
