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
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// CodeDecodeLayoutMismatch: the engine said a tensor parallel size other
// than its pod's admitted decode layout's, or the plan's: mid-rollout, a
// pod of the old template admitted under the new layout (or the reverse).
// Its rooms would move the wrong bytes, so it is refused.
const CodeDecodeLayoutMismatch ErrorCode = "DecodeLayoutMismatch"

// maxEngineTPSize bounds the TP an engine may say (the planner's own bound).
const maxEngineTPSize = transferplan.MaxTPSize

// checkAdmittedTP holds the engine's stated TP (0: not said) to the decode
// layout the pod was admitted under, when the agent was told it.
func checkAdmittedTP(info *EngineInfo, rank int, admitted *transferplan.Parallelism) error {
	if info.TPSize < 0 || info.TPSize > maxEngineTPSize {
		return errorf(CodeInvalidArgument, "tpSize is %d; it must be between 1 and %d (or absent)", info.TPSize, maxEngineTPSize)
	}
	if info.TPSize == 0 || admitted == nil || admitted.TPSize == info.TPSize {
		return nil
	}
	return errorf(CodeDecodeLayoutMismatch,
		"the engine of rank %d says tensor parallel size %d, but its pod was admitted under decode layout %s (tensor parallel size %d, annotation pd.pdtopo.dev/decode-layout): "+
			"the pod runs an engine of another layout than the one it was admitted under; recreate it from the template the PDPair describes",
		rank, info.TPSize, admitted, admitted.TPSize)
}

// checkPlanTP holds the engine's stated TP to the plan's decode layout.
func checkPlanTP(info *EngineInfo, rank int, v *routeView) error {
	d := v.snap.Layout.Decode
	if info.TPSize == 0 || d.TPSize == info.TPSize {
		return nil
	}
	return errorf(CodeDecodeLayoutMismatch,
		"the engine of rank %d says tensor parallel size %d, but the plan in use (hash %s) was made for decode layout %s (tensor parallel size %d)",
		rank, info.TPSize, shortHash(v.snap.Hash), d, d.TPSize)
}
