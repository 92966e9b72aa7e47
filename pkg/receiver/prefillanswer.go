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

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// prefillInfo is what a bootstrap address answered for engine_rank=-1,
// once checked against the plan: its wire, its DP size and, on the contract
// wire, its contract (canonical) and that contract's SHA-256.
type prefillInfo struct {
	wire     transferplan.Wire
	tpSize   int
	dpSize   int
	contract []byte // shared with the route view when it is the plan's
	sha      string
}

// refusesAddress reports whether a failure is about what the prefill is
// (its layout, wire or contract), not about reaching it: the address is
// then refused for a heartbeat interval rather than asked again per room.
func (f *RoomFailure) refusesAddress() bool {
	switch f.Reason {
	case ReasonLayoutMismatch, ReasonWireMismatch, ReasonContractMismatch:
		return true
	}
	return false
}

// fetchPrefillInfo asks a bootstrap server for its parallel info and holds
// the answer to the plan. The answer picks the wire: one with cache_layout
// is the contract wire, any other v1; each must be the plan's wire.
func (m *Manager) fetchPrefillInfo(view *routeView, addr string) (*prefillInfo, *RoomFailure) {
	ans, err := m.boot.bootstrapAnswer(m.ctx, addr)
	if err != nil {
		return nil, &RoomFailure{Reason: ReasonParallelInfoUnavailable, Message: fmt.Sprintf("could not fetch the prefill parallel info from bootstrap address %s: %v", addr, err)}
	}
	if f := checkAnswerWire(view, addr, ans.wire); f != nil {
		return nil, f
	}
	if ans.wire == kvwire.WireCacheContract {
		return m.checkContractAnswer(view, addr, &ans.contract)
	}
	if err := checkLayout(&ans.v1, view.snap.Layout); err != nil {
		return nil, &RoomFailure{Reason: ReasonLayoutMismatch, Message: fmt.Sprintf("prefill at %s does not match the layout the plan was made for (plan %s): %v", addr, shortHash(view.snap.Hash), err)}
	}
	return &prefillInfo{wire: kvwire.WireV1, tpSize: ans.v1.PrefillTPSize, dpSize: ans.v1.PrefillDPSize}, nil
}

// checkAnswerWire refuses an answer of the other wire than the plan's.
func checkAnswerWire(view *routeView, addr string, wire transferplan.Wire) *RoomFailure {
	switch {
	case view.contract && wire != kvwire.WireCacheContract:
		return &RoomFailure{Reason: ReasonWireMismatch, Message: fmt.Sprintf(
			"the bootstrap server at %s answered the v1 wire (item lengths, no cache_layout), but the plan (%s) is for the cache-contract wire: this prefill runs a tokenspeed from before the cache contract; nothing was sent to it",
			addr, shortHash(view.snap.Hash))}
	case !view.contract && wire == kvwire.WireCacheContract:
		return &RoomFailure{Reason: ReasonWireMismatch, Message: fmt.Sprintf(
			"the bootstrap server at %s answered the cache-contract wire (cache_layout), but the plan (%s) is for the v1 wire: this prefill runs a tokenspeed with the cache contract; publish a contract pair (spec.wire: CacheContract); nothing was sent to it",
			addr, shortHash(view.snap.Hash))}
	}
	return nil
}
