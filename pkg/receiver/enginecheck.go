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
	"slices"
)

func sameEngine(a, b EngineInfo) bool {
	return a.SessionID == b.SessionID && slices.Equal(a.KVDataPtrs, b.KVDataPtrs) && slices.Equal(a.StateDataPtrs, b.StateDataPtrs) &&
		engineWire(&a) == engineWire(&b) && a.ArenaPtr == b.ArenaPtr && bytes.Equal(a.Contract, b.Contract) && a.TPSize == b.TPSize
}

// validateEngine checks the engine's fields with the wire its registration
// is of, the way a prefill rank will parse the registration built from
// them, and returns what that wire keeps of them (on the contract wire the
// engine's contract, read once).
func validateEngine(info EngineInfo, advertiseHost string) (any, error) {
	return newWire(engineWire(&info)).ValidateEngine(&info, advertiseHost)
}

// checkEngine holds a checked plan to the engine's registration: the wire,
// then what the plan's wire checks (on the v1 wire the buffer counts and
// every fragment's buffer index, on the contract wire the contract's hash).
func checkEngine(reg *registration, v *routeView) error {
	if engineWire(&reg.EngineInfo) != v.wire.Name() {
		return v.wire.EngineMismatch(v)
	}
	if err := checkPlanTP(&reg.EngineInfo, v.snap.Plan.DecodeTPRank, v); err != nil {
		return err
	}
	return v.wire.CheckEngine(&reg.EngineInfo, reg.engine, v)
}
