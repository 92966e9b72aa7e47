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

package v1

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// The reference prefill executes a request's fragments buffer by buffer, but
// for state buffers it has a fallback: a target whose fragment list names no
// state buffer copies every state buffer whole, item by item, with its own
// item length as the stride on both sides. A prefill rank that sends a decode
// rank KV bytes but none of its state would therefore overwrite that rank's
// state with its own. That is harmless only when the rank holds exactly what
// the decode rank needs: every state buffer replicated with equal items.

// checkStateSources rejects fragmented layouts in which some decode rank
// pulls KV from a prefill rank that holds none of its state, unless every
// state buffer is replicated (the whole-item copy then writes the same bytes
// again). It walks sources only, once per decode rank.
func (p *Planner) checkStateSources() error {
	var sharded *bufferPair
	for i := range p.pairs {
		if bp := &p.pairs[i]; bp.spec.Kind == transferplan.MambaState && bp.prefill.Axis != AxisReplicated {
			sharded = bp
			break
		}
	}
	if p.kind != transferplan.PlanFragmented || sharded == nil {
		return nil
	}
	// stamp[r] is d+1 once rank r has given decode rank d a state fragment.
	stamp := make([]int, p.prefillTP)
	var kvOnly []int
	for d := 0; d < p.decodeTP; d++ {
		kvOnly = kvOnly[:0]
		p.eachSource(d, func(bp *bufferPair, r int) {
			if bp.spec.Kind == transferplan.MambaState {
				stamp[r] = d + 1
			} else {
				kvOnly = append(kvOnly, r)
			}
		})
		for _, r := range kvOnly {
			if stamp[r] != d+1 {
				return bufferErrorf(transferplan.ReasonWholeStateCopyUnsafe, sharded.spec, sharded.prefill.Index,
					"decode TP rank %d pulls KV cache from prefill TP rank %d, which holds none of its state; "+
						"a prefill rank given no state fragment copies every state buffer whole (%d-byte prefill items into %d-byte decode items), "+
						"which overwrites that decode rank's state",
					d, r, sharded.prefill.ItemStrideBytes, sharded.decode.ItemStrideBytes)
			}
		}
	}
	return nil
}
