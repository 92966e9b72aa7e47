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

package contract

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Wire is tokenspeed's cache-contract wire (docs/wire.md).
// A decode rank tells its prefill ranks where its arena is and what its
// contract says, and the prefill plans the transfer itself: no fragment
// travels. The agent sends one 8-frame registration per (bootstrap address,
// DP group) to every rank its plan names, dummies included, and per room a
// 3-frame pre-allocation carrying the engine's block manifest, empty for a
// dummy. A room completes on Success from exactly the plan's sources.
type Wire struct {
	// plannedPrefill is the prefill contract the plan was made for, once a
	// bootstrap server served it (the plan holds only its hash): what a
	// contract that differs is compared with.
	plannedPrefill atomic.Pointer[[]byte]
}

// New is a cache-contract wire for one route view.
func New() *Wire { return &Wire{} }

var _ wire.Wire = (*Wire)(nil)

func (*Wire) Name() kvwire.Wire { return kvwire.WireCacheContract }

// CheckPlan holds a contract plan's dummies to the wire's one kind of
// dummy: an idle prefill rank decode rank 0 registers with so that it
// completes its rooms. Its dummy targets are exactly its idle ranks.
func (*Wire) CheckPlan(plan *transferplan.RoutePlan) error {
	var dummies []int
	for _, t := range plan.Targets {
		if t.IsDummy {
			dummies = append(dummies, t.PrefillTPRank)
		}
	}
	idle := slices.Clone(plan.IdlePrefillTPRanks)
	slices.Sort(dummies)
	slices.Sort(idle)
	if !slices.Equal(dummies, idle) {
		return fmt.Errorf("plan for decode TP rank %d has dummy targets %v but idle prefill TP ranks %v; on the cache-contract wire they are the same ranks",
			plan.DecodeTPRank, dummies, idle)
	}
	return nil
}

// SendsDummyTargets: a contract plan's dummy targets are its idle ranks.
func (*Wire) SendsDummyTargets() bool { return false }

func (*Wire) FinishView(v wire.View) error {
	if v.RequiredResponses() != v.ExpectedResponses() {
		return fmt.Errorf("plan for decode TP rank %d needs %d prefill responses but has %d sources; on the cache-contract wire a room completes on Success from exactly its sources", v.Plan().DecodeTPRank, v.RequiredResponses(), v.ExpectedResponses())
	}
	return nil
}

func (*Wire) ValidateEngine(info *wire.EngineInfo, advertiseHost string) (any, error) {
	return newEngineContract(info, advertiseHost)
}

func (*Wire) CheckEngine(_ *wire.EngineInfo, engine any, v wire.View) error {
	return checkEngineContract(engine.(*engineContract), v)
}

func (*Wire) EngineMismatch(v wire.View) error {
	return wire.Errorf(wire.CodeWireMismatch, "the engine registered v1 buffer pointers, but the plan (%s) is for the cache-contract wire: register with kind %q, the arena pointer (kvDataPtr) and the decode contract (cacheLayout)",
		wire.ShortHash(v.PlanHash()), "contract")
}

func (*Wire) DecodeAnswer(body []byte) (any, error) {
	p, err := kvcontract.DecodeParallelInfo(body)
	return &p, err
}

func (w *Wire) CheckAnswer(h wire.Host, v wire.View, addr string, answer any) (*wire.PrefillInfo, *wire.RoomFailure) {
	return w.checkContractAnswer(h, v, addr, answer.(*kvcontract.ParallelInfo))
}

func (*Wire) AnswerMismatch(v wire.View, addr string) *wire.RoomFailure {
	return &wire.RoomFailure{Reason: wire.ReasonWireMismatch, Message: fmt.Sprintf(
		"the bootstrap server at %s answered the v1 wire (item lengths, no cache_layout), but the plan (%s) is for the cache-contract wire: this prefill runs a tokenspeed from before the cache contract; nothing was sent to it",
		addr, wire.ShortHash(v.PlanHash()))}
}

// RegistrationFrames encodes this rank's registration on the contract
// wire: the engine's contract bytes as it gave them, and the TP
// coordinates of the plan.
func (*Wire) RegistrationFrames(h wire.Host, v wire.View, eng *wire.EngineInfo, engine any) [][]byte {
	reg := kvcontract.Registration{
		DecodeIP: h.AdvertiseHost(), DecodeStatusPort: h.StatusPort(), SessionID: eng.SessionID,
		ArenaPtr: eng.ArenaPtr, Contract: engine.(*engineContract).raw,
		DecodeTPSize: v.Layout().Decode.TPPerDP(), DecodeTPRank: v.Plan().DecodeTPRank,
	}
	return reg.Frames()
}

// Probe asks for the parallel info instead of /health: it answers as
// /health does and also tells whether the prefill changed its contract (or
// wire, or sizes) since its ranks got the registration. Then the address is
// dropped and its unfinished rooms fail, saying what changed, and the next
// room asks again (and is held to the plan).
func (*Wire) Probe(ctx context.Context, h wire.Host, addr string, info *wire.PrefillInfo) (*wire.RoomFailure, error) {
	ans, err := h.Answer(ctx, addr)
	if err != nil {
		return nil, err
	}
	if reason, msg := contractChange(addr, info, &ans); reason != "" {
		return &wire.RoomFailure{Reason: reason, Message: msg}, nil
	}
	return nil, nil
}

// CheckRequest refuses a request of the other wire, and a manifest that
// does not fit the engine's decode contract (kvcontract.ValidateManifest:
// the engine's checks in its order, a block id outside the arena among
// them), naming the reason, the group and the numbers.
func (*Wire) CheckRequest(_ wire.Host, e wire.Room, req *wire.TransferRequest) error {
	v1 := req.KVIndices != nil || req.MambaIndices != nil || req.AuxIndex != 0 || req.DecodePrefixLen != 0
	switch {
	case req.Manifest == nil:
		return wire.Errorf(wire.CodeWireMismatch, "room %d is on the cache-contract wire: its request is a block manifest (kind %q, manifest), not v1 page indices", e.RoomID(), "contract")
	case v1:
		return wire.Errorf(wire.CodeInvalidArgument, "room %d's request carries both a block manifest and v1 page indices", e.RoomID())
	}
	manifest := req.Manifest
	if _, err := kvcontract.ValidateManifest(manifest, &e.EngineState().(*engineContract).manifest); err != nil {
		return wire.Errorf(wire.CodeManifestRefused, "room %d's block manifest (%d bytes) does not fit the decode contract the engine registered: %v; nothing of the room was sent",
			e.RoomID(), len(manifest), err)
	}
	return nil
}

// SendRequest sends a requested room's manifest to every source of its
// plan and an empty manifest to every dummy, as the engine does. The room
// and session frames are encoded once and the manifest is the engine's
// bytes: a room costs no copy of its manifest per target.
func (*Wire) SendRequest(h wire.Host, e wire.Room, req *wire.TransferRequest) {
	p := kvcontract.PreAllocation{Room: e.RoomID(), SessionID: e.Session(), Manifest: req.Manifest}
	var frames [kvcontract.PreAllocationFrames][]byte
	full := p.AppendFrames(frames[:0])
	dummy := [kvcontract.PreAllocationFrames][]byte{full[0], full[1], {}}
	v := e.RouteView()
	for i := range v.NumSends() {
		t := v.Target(i)
		out := full
		if t.Dummy {
			out = dummy[:]
		}
		if err := h.Push().Send(e.Endpoint(i), out); err != nil {
			h.FailRoom(e, wire.ReasonSendFailed, fmt.Sprintf("could not send room %d's pre-allocation to prefill TP rank %d (dp group %d of %s): %v", e.RoomID(), t.Rank, e.DPGroup(), e.BootstrapAddr(), err))
			return
		}
	}
}

// rememberPlannedPrefill keeps the first prefill contract served whose hash
// is the plan's: the contract a differing one is compared with.
func (w *Wire) rememberPlannedPrefill(canonical []byte) []byte {
	if p := w.plannedPrefill.Load(); p != nil {
		return *p
	}
	w.plannedPrefill.CompareAndSwap(nil, &canonical)
	return *w.plannedPrefill.Load()
}
