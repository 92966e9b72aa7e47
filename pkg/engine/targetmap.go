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

package engine

import (
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MappedRank is one decode rank's targets as its engine maps them.
type MappedRank struct {
	// DecodeTPRank is the rank as the engine numbers it.
	DecodeTPRank int
	// Targets are the prefill ranks it contacts, in the engine's order;
	// IsDummy ones it only notifies. Fragments are empty: the engine's own
	// code moves the bytes.
	Targets []transferplan.PlanTarget
	// RequiredPrefillResponseNum is how many prefill answers the rank
	// waits for (0: one per real target).
	RequiredPrefillResponseNum int
}

// TargetMap is the RankMap of an engine whose own connector moves the KV
// cache (vLLM's, SGLang's): no agent loads plans, so Plans is nil, and the
// mapping is stated rank by rank for the status and pdtopo plan.
type TargetMap struct {
	Ranks []MappedRank
	// Layout is the record the mapping is printed with (parallelism and
	// page size; no buffers: the engine sizes them).
	Layout transferplan.LayoutRecord
}

var _ RankMap = (*TargetMap)(nil)

// DecodeRanks is the number of decode ranks mapped.
func (m *TargetMap) DecodeRanks() int { return len(m.Ranks) }

// PrefillRanks are the prefill ranks decode rank d reads, dummies left out.
func (m *TargetMap) PrefillRanks(d int) ([]int, error) {
	if d < 0 || d >= len(m.Ranks) {
		return nil, fmt.Errorf("decode rank %d of %d", d, len(m.Ranks))
	}
	var out []int
	for _, t := range m.Ranks[d].Targets {
		if !t.IsDummy {
			out = append(out, t.PrefillTPRank)
		}
	}
	return out, nil
}

// Plans is nil: the engine's agent loads none.
func (m *TargetMap) Plans() Plans { return nil }

// PlanSet is the mapping in the form pdtopo plan prints: one route plan
// per decode rank, its targets without fragments.
func (m *TargetMap) PlanSet() *transferplan.PlanSet {
	set := &transferplan.PlanSet{Compatible: true, Layout: m.Layout, Plans: make([]transferplan.RoutePlan, 0, len(m.Ranks))}
	for _, r := range m.Ranks {
		p := transferplan.RoutePlan{DecodeTPRank: r.DecodeTPRank, Targets: r.Targets, RequiredPrefillResponseNum: r.RequiredPrefillResponseNum,
			TargetTPRanks: []int{}, IdlePrefillTPRanks: []int{}}
		for _, t := range r.Targets {
			if !t.IsDummy {
				p.TargetTPRanks = append(p.TargetTPRanks, t.PrefillTPRank)
			}
		}
		if p.RequiredPrefillResponseNum == 0 {
			p.RequiredPrefillResponseNum = len(p.TargetTPRanks)
		}
		set.Plans = append(set.Plans, p)
	}
	return set
}

// SpecField is the PDPair field an engine rule's field names: the rules
// speak the engines' words (blockSize, pageSize), the spec pdtopo's.
func SpecField(field string) string {
	role, name, ok := strings.Cut(field, ".")
	switch {
	case field == "kvConnector":
		return "engine.kvConnector"
	case role == "model":
		return "model"
	case ok && (name == "blockSize" || name == "pageSize"):
		return role + ".tokensPerPage"
	}
	return field
}

// Reads is Assessed.Reads from the mapping itself, for an engine whose
// mapping is small (vLLM's: max(prefill TP, decode TP) targets in all).
// prefillTPPerDP is the prefill TP ranks of one DP group.
func (m *TargetMap) Reads(prefillTPPerDP int) (perDecodeRank int, idle []int) {
	read := make([]bool, prefillTPPerDP)
	for _, r := range m.Ranks {
		n := 0
		for _, t := range r.Targets {
			if t.IsDummy {
				continue
			}
			n++
			if t.PrefillTPRank >= 0 && t.PrefillTPRank < len(read) {
				read[t.PrefillTPRank] = true
			}
		}
		perDecodeRank = max(perDecodeRank, n)
	}
	idle = []int{}
	for r, ok := range read {
		if !ok {
			idle = append(idle, r)
		}
	}
	return perDecodeRank, idle
}
