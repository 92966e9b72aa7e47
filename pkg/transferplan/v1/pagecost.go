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

// pageCost finds the longest run of one target's fragments for one buffer:
// what one page of that buffer costs the decode rank (a run of token rows
// when a decode rank takes a head range of each row).
type pageCost struct {
	layout transferplan.LayoutRecord
	// mostRun is the longest run, runAt its first fragment and runRank the
	// decode rank it was seen in.
	mostRun, runRank int
	runAt            transferplan.TransferFragment
}

func (z *pageCost) Add(plan *transferplan.RoutePlan) {
	for _, t := range plan.Targets {
		z.addRuns(plan.DecodeTPRank, t.Fragments)
	}
}

// addRuns finds the longest run of fragments one target has for one buffer
// (a target's fragments of a buffer are consecutive: one slice, cut into
// token rows or not).
func (z *pageCost) addRuns(decodeRank int, frags []transferplan.TransferFragment) {
	for i, run := 0, 0; i < len(frags); i++ {
		f := frags[i]
		if i == 0 || f.BufferKind != frags[i-1].BufferKind || f.BufferIndex != frags[i-1].BufferIndex {
			run = 0
		}
		if run++; run > z.mostRun {
			z.mostRun, z.runAt, z.runRank = run, frags[i-run+1], decodeRank
		}
	}
}

// Cost says what the longest run of one buffer's fragments is and why.
func (z *pageCost) Cost() (int, string) {
	most, at, of := z.mostRun, z.runAt, z.runRank
	switch {
	case most == 0:
		return 0, "whole items: each prefill rank copies whole pages, no fragments"
	case most == 1 && z.layout.TokensPerPage <= 1:
		return 1, "1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token"
	case most == 1:
		return 1, "1 fragment per page for each buffer a decode rank pulls from a prefill rank: every slice is whole token rows on both sides, so a page's rows move as one block"
	}
	rows := int64(most)
	unit := int64(1)
	if at.BufferKind.IsKV() && at.BufferIndex < len(z.layout.PrefillKVUnitLens) && z.layout.PrefillKVUnitLens[at.BufferIndex] > 0 {
		unit = z.layout.PrefillKVUnitLens[at.BufferIndex]
	}
	return most, fmt.Sprintf("%d fragments per page for each buffer a decode rank pulls from a prefill rank: "+
		"decode rank %d takes %d of prefill rank %d's %d heads (%d-byte units) from each of the %d token rows of a page into its %d-head rows; "+
		"pages are token-major, so each row is a separate fragment",
		most, of, at.BytesPerPage/unit, at.SrcRank, at.SrcPageStrideBytes/rows/unit, unit, rows, at.DstPageStrideBytes/rows/unit)
}
