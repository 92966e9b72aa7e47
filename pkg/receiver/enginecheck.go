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

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

func sameEngine(a, b EngineInfo) bool {
	return a.SessionID == b.SessionID && slices.Equal(a.KVDataPtrs, b.KVDataPtrs) && slices.Equal(a.StateDataPtrs, b.StateDataPtrs) &&
		bytes.Equal(a.Contract, b.Contract)
}

// validateEngine checks the engine's fields the way a prefill rank will
// parse the registration built from them.
func validateEngine(info EngineInfo, advertiseHost string) error {
	if len(info.KVDataPtrs) == 0 {
		return errorf(CodeInvalidArgument, "kvDataPtrs is empty: a decode rank registers at least one KV buffer")
	}
	if info.Contract != nil {
		if err := kvwire.CheckContractEnvelope(info.Contract); err != nil {
			return errorf(CodeInvalidArgument, "contract: %v", err)
		}
	}
	reg := kvwire.Registration{DecodeIP: advertiseHost, DecodeStatusPort: 1, SessionID: info.SessionID, KVPtrs: info.KVDataPtrs, StatePtrs: info.StateDataPtrs}
	if err := reg.Validate(); err != nil {
		return errorf(CodeInvalidArgument, "sessionId %q: %v", info.SessionID, err)
	}
	return nil
}

// checkEngine holds a checked plan to the engine's registration: the
// buffer counts, then every fragment's buffer index.
func checkEngine(info EngineInfo, v *routeView) error {
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
