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

package transferplan

import "fmt"

// MaxTPSize bounds tensorParallelSize on either side, far above any real
// deployment (and mirrored by the CRD's validation).
const MaxTPSize = 16384

// Parallelism is one role's attention world: TPSize ranks in DPSize
// data-parallel groups of TPSize/DPSize ranks each.
type Parallelism struct {
	TPSize int `json:"tensorParallelSize"`
	DPSize int `json:"dataParallelSize"`
}

// TPPerDP is the number of TP ranks in one DP group; all planning uses it.
func (p Parallelism) TPPerDP() int { return p.TPSize / p.DPSize }

// DPDividesTP reports whether the fleet splits into DPSize groups of equal
// size: DPSize is at least 1 and divides TPSize. The planner, the wire
// decoders (pkg/kvwire) and the receiver ask this one function.
func (p Parallelism) DPDividesTP() bool { return p.DPSize >= 1 && p.TPSize%p.DPSize == 0 }

// Validate checks sizes and that DP divides TP; role prefixes the field path.
func (p Parallelism) Validate(role string) error {
	if p.TPSize < 1 || p.TPSize > MaxTPSize {
		return LayoutErrorf(ReasonInvalidLayout, role+".tensorParallelSize", "must be between 1 and %d, got %d", MaxTPSize, p.TPSize).
			WithFix(fmt.Sprintf("set %s.tensorParallelSize to the role's whole attention world (--tp-size), 1 to %d", role, MaxTPSize))
	}
	if p.DPSize < 1 {
		return LayoutErrorf(ReasonInvalidLayout, role+".dataParallelSize", "must be at least 1, got %d", p.DPSize).
			WithFix(fmt.Sprintf("set %s.dataParallelSize to 1, or to the number of DP attention groups", role))
	}
	if !p.DPDividesTP() {
		return LayoutErrorf(ReasonInvalidLayout, role+".dataParallelSize",
			"%d does not divide tensorParallelSize %d", p.DPSize, p.TPSize).
			WithFix(fmt.Sprintf("set %s.dataParallelSize to a divisor of %d: %s", role, p.TPSize, OrList(divisorsUpTo(p.TPSize, 12))))
	}
	return nil
}
