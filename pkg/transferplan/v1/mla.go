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

import (
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MLA ranks each hold the whole latent KV cache, so a decode rank needs one
// source. With P prefill and D decode TP ranks, decode rank d maps to the
// prefill ranks [d*P/D, (d+1)*P/D) when P >= D (the first is real, the rest get
// dummy messages so they complete the room) and to prefill rank d*P/D when
// D > P (several decode ranks share one source). For ratios that divide this
// is exactly the reference; for ratios that do not, every rank named exists and
// every prefill rank is covered, where the reference named ranks past the end.

// checkMLAItems rejects MLA buffers whose items differ between the sides:
// the prefill copies whole items page by page with its own item length as the
// stride on both sides (it gets no fragments), so an item of another size on
// the decode would receive bytes at the wrong places.
func checkMLAItems(l Layout) error {
	for _, group := range [][]BufferSpec{l.KVBuffers, l.StateBuffers} {
		for i, b := range group {
			if b.PrefillItemBytes != b.DecodeItemBytes {
				return bufferErrorf(transferplan.ReasonMLAItemSizeMismatch, b, i,
					"prefill item %d bytes, decode item %d bytes; every MLA rank holds the whole latent cache, so the items must be equal",
					b.PrefillItemBytes, b.DecodeItemBytes).WithFix(mlaItemFix(b, l.Prefill.TPPerDP(), l.Decode.TPPerDP()))
			}
		}
	}
	return nil
}

// mlaTargetRange is the half-open range of prefill TP ranks decode rank d contacts.
func (p *Planner) mlaTargetRange(d int) (lo, hi int) {
	P, D := p.prefillTP, p.decodeTP
	if p.layout.MLAL15Cache {
		return 0, P
	}
	if P >= D {
		return d * P / D, (d + 1) * P / D
	}
	return d * P / D, d*P/D + 1
}

// mlaFanOut counts the decode ranks that message each prefill rank.
func (p *Planner) mlaFanOut() []int {
	fan := make([]int, p.prefillTP)
	for d := 0; d < p.decodeTP; d++ {
		lo, hi := p.mlaTargetRange(d)
		for r := lo; r < hi; r++ {
			fan[r]++
		}
	}
	return fan
}

func (p *Planner) mlaPlan(d int) transferplan.RoutePlan {
	lo, hi := p.mlaTargetRange(d)
	plan := transferplan.RoutePlan{
		DecodeTPRank:                 d,
		PlanKind:                     transferplan.PlanMLA,
		TargetTPRanks:                make([]int, 0, hi-lo),
		Targets:                      make([]transferplan.PlanTarget, 0, hi-lo),
		RequiredPrefillResponseNum:   1,
		SupportsRemoteSpecCandidates: true,
	}
	if p.layout.MLAL15Cache {
		// Every prefill rank holds part of the L1.5 cache and answers.
		plan.RequiredPrefillResponseNum = hi - lo
	} else {
		target := lo
		plan.TargetTPRank = &target
	}
	for r := lo; r < hi; r++ {
		plan.TargetTPRanks = append(plan.TargetTPRanks, r)
		plan.Targets = append(plan.Targets, transferplan.PlanTarget{
			PrefillTPRank:      r,
			IsDummy:            plan.TargetTPRank != nil && r != *plan.TargetTPRank,
			RequiredDstInfoNum: p.fanOut[r],
			Fragments:          []transferplan.TransferFragment{},
		})
	}
	return plan
}

// mlaItemFix: equal items; a ratio of 2 or 4 that is not the prefill item
// default is two KV cache dtypes.
func mlaItemFix(b BufferSpec, P, D int) string {
	fix := fmt.Sprintf("set prefillItemBytes to %d, the decode item", b.DecodeItemBytes)
	if b.PrefillItemBytes == DefaultPrefillItemBytes(b.DecodeItemBytes, D, P) {
		fix += " (its default decodeItemBytes × decode TP / prefill TP assumes sharded heads)"
	} else if r := dtypeRatio(b.PrefillItemBytes, b.DecodeItemBytes); r != "" {
		fix += "; items " + r + " apart are what KV caches of different dtypes give: set the same kvCacheDtype on both roles"
	}
	return fix
}
