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
