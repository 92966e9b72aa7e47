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
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// contractWire is tokenspeed's cache-contract wire (docs/wire.md).
// A decode rank tells its prefill ranks where its arena is and what its
// contract says, and the prefill plans the transfer itself: no fragment
// travels. The agent sends one 8-frame registration per (bootstrap address,
// DP group) to every rank its plan names, dummies included, and per room a
// 3-frame pre-allocation carrying the engine's block manifest, empty for a
// dummy. A room completes on Success from exactly the plan's sources.
type contractWire struct {
	// plannedPrefill is the prefill contract the plan was made for, once a
	// bootstrap server served it (the plan holds only its hash): what a
	// contract that differs is compared with.
	plannedPrefill atomic.Pointer[[]byte]
}

func (*contractWire) name() kvwire.Wire { return kvwire.WireCacheContract }

// checkPlan holds a contract plan's dummies to the wire's one kind of
// dummy: an idle prefill rank decode rank 0 registers with so that it
// completes its rooms. Its dummy targets are exactly its idle ranks.
func (*contractWire) checkPlan(plan *transferplan.RoutePlan) error {
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

// sendsDummyTargets: a contract plan's dummy targets are its idle ranks.
func (*contractWire) sendsDummyTargets() bool { return false }

func (*contractWire) finishView(v *routeView) error {
	if v.required != v.expected {
		return fmt.Errorf("plan for decode TP rank %d needs %d prefill responses but has %d sources; on the cache-contract wire a room completes on Success from exactly its sources", v.snap.Plan.DecodeTPRank, v.required, v.expected)
	}
	return nil
}

func (*contractWire) validateEngine(info EngineInfo, advertiseHost string) (any, error) {
	return newEngineContract(info, advertiseHost)
}

func (*contractWire) checkEngine(reg *registration, v *routeView) error {
	return checkEngineContract(reg.engine.(*engineContract), v)
}

func (*contractWire) engineMismatch(v *routeView) error {
	return errorf(CodeWireMismatch, "the engine registered v1 buffer pointers, but the plan (%s) is for the cache-contract wire: register with kind %q, the arena pointer (kvDataPtr) and the decode contract (cacheLayout)",
		shortHash(v.snap.Hash), "contract")
}

func (*contractWire) decodeAnswer(body []byte) (any, error) {
	p, err := kvcontract.DecodeParallelInfo(body)
	return &p, err
}

func (w *contractWire) checkAnswer(m *Manager, v *routeView, addr string, answer any) (*prefillInfo, *RoomFailure) {
	return w.checkContractAnswer(m, v, addr, answer.(*kvcontract.ParallelInfo))
}

func (*contractWire) answerMismatch(v *routeView, addr string) *RoomFailure {
	return &RoomFailure{Reason: ReasonWireMismatch, Message: fmt.Sprintf(
		"the bootstrap server at %s answered the v1 wire (item lengths, no cache_layout), but the plan (%s) is for the cache-contract wire: this prefill runs a tokenspeed from before the cache contract; nothing was sent to it",
		addr, shortHash(v.snap.Hash))}
}

// registrationFrames encodes this rank's registration on the contract
// wire: the engine's contract bytes as it gave them, and the TP
// coordinates of the plan.
func (*contractWire) registrationFrames(m *Manager, v *routeView, eng *registration) [][]byte {
	reg := kvcontract.Registration{
		DecodeIP: m.cfg.AdvertiseHost, DecodeStatusPort: m.status.port, SessionID: eng.SessionID,
		ArenaPtr: eng.ArenaPtr, Contract: eng.engine.(*engineContract).raw,
		DecodeTPSize: v.snap.Layout.Decode.TPPerDP(), DecodeTPRank: v.snap.Plan.DecodeTPRank,
	}
	return reg.Frames()
}

// probe asks for the parallel info instead of /health: it answers as
// /health does and also tells whether the prefill changed its contract (or
// wire, or sizes) since its ranks got the registration. Then the address is
// dropped and its unfinished rooms fail, saying what changed, and the next
// room asks again (and is held to the plan).
func (*contractWire) probe(ctx context.Context, m *Manager, t *peerTable, p livePeer) error {
	ans, err := m.boot.bootstrapAnswer(ctx, p.addr)
	if err != nil {
		return err
	}
	if reason, msg := contractChange(p.addr, p.info, &ans); reason != "" {
		m.loseAddress(t, p.addr, reason, msg)
	}
	return nil
}

// checkRequest refuses a request of the other wire, and a manifest that
// does not fit the engine's decode contract (kvcontract.ValidateManifest:
// the engine's checks in its order, a block id outside the arena among
// them), naming the reason, the group and the numbers.
func (*contractWire) checkRequest(_ *Manager, e *roomEntry, req *TransferRequest) error {
	v1 := req.KVIndices != nil || req.MambaIndices != nil || req.AuxIndex != 0 || req.DecodePrefixLen != 0
	switch {
	case req.Manifest == nil:
		return errorf(CodeWireMismatch, "room %d is on the cache-contract wire: its request is a block manifest (kind %q, manifest), not v1 page indices", e.id, "contract")
	case v1:
		return errorf(CodeInvalidArgument, "room %d's request carries both a block manifest and v1 page indices", e.id)
	}
	manifest := req.Manifest
	if _, err := kvcontract.ValidateManifest(manifest, &e.reg.engine.(*engineContract).manifest); err != nil {
		return errorf(CodeManifestRefused, "room %d's block manifest (%d bytes) does not fit the decode contract the engine registered: %v; nothing of the room was sent",
			e.id, len(manifest), err)
	}
	return nil
}

// sendRequest sends a requested room's manifest to every source of its
// plan and an empty manifest to every dummy, as the engine does. The room
// and session frames are encoded once and the manifest is the engine's
// bytes: a room costs no copy of its manifest per target.
func (*contractWire) sendRequest(m *Manager, e *roomEntry, req *TransferRequest) {
	p := kvcontract.PreAllocation{Room: e.id, SessionID: e.reg.SessionID, Manifest: req.Manifest}
	var frames [kvcontract.PreAllocationFrames][]byte
	full := p.AppendFrames(frames[:0])
	dummy := [kvcontract.PreAllocationFrames][]byte{full[0], full[1], {}}
	for i := range e.view.sends {
		t := &e.view.sends[i]
		out := full
		if t.dummy {
			out = dummy[:]
		}
		if err := m.push.send(e.endpoints[i], out); err != nil {
			m.failRoom(e, ReasonSendFailed, fmt.Sprintf("could not send room %d's pre-allocation to prefill TP rank %d (dp group %d of %s): %v", e.id, t.rank, e.group, e.addr, err))
			return
		}
	}
}

// rememberPlannedPrefill keeps the first prefill contract served whose hash
// is the plan's: the contract a differing one is compared with.
func (w *contractWire) rememberPlannedPrefill(canonical []byte) []byte {
	if p := w.plannedPrefill.Load(); p != nil {
		return *p
	}
	w.plannedPrefill.CompareAndSwap(nil, &canonical)
	return *w.plannedPrefill.Load()
}
