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

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
)

// prefillInfo is what a bootstrap address answered for engine_rank=-1,
// once its wire checked it against the plan: its sizes and what the wire
// keeps of the answer (served: a *servedContract on the contract wire, nil
// on v1).
type prefillInfo = wire.PrefillInfo

// refusesAddress reports whether a failure is about what the prefill is
// (its layout, wire or contract), not about reaching it: the address is
// then refused for a heartbeat interval rather than asked again per room.
func refusesAddress(f *RoomFailure) bool {
	switch f.Reason {
	case ReasonLayoutMismatch, ReasonWireMismatch, ReasonContractMismatch:
		return true
	}
	return false
}

// fetchPrefillInfo asks a bootstrap server for its parallel info and holds
// the answer to the plan. The answer names its wire (one with cache_layout
// is the contract wire, any other v1), which must be the plan's; the
// plan's wire then checks it.
func (m *Manager) fetchPrefillInfo(view *routeView, addr string) (*prefillInfo, *RoomFailure) {
	ans, err := m.boot.bootstrapAnswer(m.ctx, addr)
	if err != nil {
		return nil, &RoomFailure{Reason: ReasonParallelInfoUnavailable, Message: fmt.Sprintf("could not fetch the prefill parallel info from bootstrap address %s: %v", addr, err)}
	}
	if ans.Wire.Name() != view.wire.Name() {
		return nil, view.wire.AnswerMismatch(view, addr)
	}
	return view.wire.CheckAnswer(m.host(), view, addr, ans.Value)
}
