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
	"bytes"
	"fmt"
	"slices"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

func sameEngine(a, b EngineInfo) bool {
	return a.SessionID == b.SessionID && slices.Equal(a.KVDataPtrs, b.KVDataPtrs) && slices.Equal(a.StateDataPtrs, b.StateDataPtrs) &&
		a.contractWire() == b.contractWire() && a.ArenaPtr == b.ArenaPtr && bytes.Equal(a.Contract, b.Contract)
}

// validateEngine checks the engine's fields the way a prefill rank will
// parse the registration built from them; on the contract wire it returns
// the engine's contract, read once.
func validateEngine(info EngineInfo, advertiseHost string) (*engineContract, error) {
	if info.contractWire() {
		return newEngineContract(info, advertiseHost)
	}
	if info.ArenaPtr != 0 {
		return nil, errorf(CodeInvalidArgument, "a v1 registration names its buffers (kvDataPtrs, stateDataPtrs), not an arena")
	}
	if len(info.KVDataPtrs) == 0 {
		return nil, errorf(CodeInvalidArgument, "kvDataPtrs is empty: a decode rank registers at least one KV buffer")
	}
	reg := kvv1.Registration{DecodeIP: advertiseHost, DecodeStatusPort: 1, SessionID: info.SessionID, KVPtrs: info.KVDataPtrs, StatePtrs: info.StateDataPtrs}
	if err := reg.Validate(); err != nil {
		return nil, errorf(CodeInvalidArgument, "sessionId %q: %v", info.SessionID, err)
	}
	return nil, nil
}

// checkEngine holds a checked plan to the engine's registration (ec is its
// contract on the contract wire): the wire, then on the v1 wire the buffer
// counts and every fragment's buffer index, on the contract wire the
// contract's hash.
func checkEngine(info EngineInfo, ec *engineContract, v *routeView) error {
	if err := checkWire(info, v); err != nil {
		return err
	}
	if v.contract {
		return checkEngineContract(ec, v)
	}
	if err := checkEngineBuffers(info, v.snap); err != nil {
		return err
	}
	return checkFragmentsFit(info, v)
}

// checkEngineBuffers compares the engine's buffer counts with the layout
// its plan was made for: prefill ranks index the registered pointers by the
// plan's buffer numbers, so a different count would move bytes to the
// wrong place.
func checkEngineBuffers(info EngineInfo, snap PlanSnapshot) error {
	kv, state := len(snap.Layout.DecodeKVItemLens), len(snap.Layout.DecodeStateItemLens)
	if len(info.KVDataPtrs) != kv || len(info.StateDataPtrs) != state {
		return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(
			"the engine registers %d KV and %d state buffers but the plan (%s) was made for %d KV and %d state buffers",
			len(info.KVDataPtrs), len(info.StateDataPtrs), shortHash(snap.Hash), kv, state)}
	}
	return nil
}
