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
	"fmt"
	"slices"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// On the cache-contract wire (docs/wire.md) a decode rank tells
// its prefill ranks where its arena is and what its contract says, and the
// prefill plans the transfer itself: no fragment travels. The agent sends
// one 8-frame registration per (bootstrap address, DP group) to every rank
// its plan names, dummies included, and per room a 3-frame pre-allocation
// carrying the engine's block manifest, empty for a dummy. A room completes
// on Success from exactly the plan's sources.

// checkContractDummies holds a contract plan's dummies to the wire's one
// kind of dummy: an idle prefill rank decode rank 0 registers with so that
// it completes its rooms. Its dummy targets are exactly its idle ranks.
func checkContractDummies(plan *transferplan.RoutePlan) error {
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

// contractRegistrationFrames encodes this rank's registration on the
// contract wire: the engine's contract bytes as it gave them, and the TP
// coordinates of the plan.
func (m *Manager) contractRegistrationFrames(view *routeView, eng *registration) [][]byte {
	reg := kvcontract.Registration{
		DecodeIP: m.cfg.AdvertiseHost, DecodeStatusPort: m.status.port, SessionID: eng.SessionID,
		ArenaPtr: eng.ArenaPtr, Contract: eng.contract.raw,
		DecodeTPSize: view.snap.Layout.Decode.TPPerDP(), DecodeTPRank: view.snap.Plan.DecodeTPRank,
	}
	return reg.Frames()
}

// sendPreAllocation sends a requested room's manifest to every source of
// its plan and an empty manifest to every dummy, as the engine does. The
// room and session frames are encoded once and the manifest is the
// engine's bytes: a room costs no copy of its manifest per target.
func (m *Manager) sendPreAllocation(e *roomEntry, manifest []byte) {
	p := kvcontract.PreAllocation{Room: e.id, SessionID: e.reg.SessionID, Manifest: manifest}
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

// checkManifest refuses a manifest that does not fit the engine's decode
// contract (kvcontract.ValidateManifest: the engine's checks in its order, a
// block id outside the arena among them), naming the reason, the group and
// the numbers.
func checkManifest(e *roomEntry, manifest []byte) error {
	if _, err := kvcontract.ValidateManifest(manifest, &e.reg.contract.manifest); err != nil {
		return errorf(CodeManifestRefused, "room %d's block manifest (%d bytes) does not fit the decode contract the engine registered: %v; nothing of the room was sent",
			e.id, len(manifest), err)
	}
	return nil
}

// checkRequestWire refuses a request of the other wire than its room's.
func checkRequestWire(e *roomEntry, req *TransferRequest) error {
	v1 := req.KVIndices != nil || req.MambaIndices != nil || req.AuxIndex != 0 || req.DecodePrefixLen != 0
	switch {
	case e.view.contract && req.Manifest == nil:
		return errorf(CodeWireMismatch, "room %d is on the cache-contract wire: its request is a block manifest (kind %q, manifest), not v1 page indices", e.id, "contract")
	case e.view.contract && v1:
		return errorf(CodeInvalidArgument, "room %d's request carries both a block manifest and v1 page indices", e.id)
	case !e.view.contract && req.Manifest != nil:
		return errorf(CodeWireMismatch, "room %d is on the v1 wire: its request is page indices (kvIndices, auxIndex), not a block manifest", e.id)
	}
	return nil
}

// rememberPlannedPrefill keeps the first prefill contract served whose hash
// is the plan's: the contract a differing one is compared with.
func (v *routeView) rememberPlannedPrefill(canonical []byte) []byte {
	if p := v.plannedPrefill.Load(); p != nil {
		return *p
	}
	v.plannedPrefill.CompareAndSwap(nil, &canonical)
	return *v.plannedPrefill.Load()
}
