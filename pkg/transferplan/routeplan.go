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

// RoutePlan is one decode TP rank's precomputed route: which prefill TP ranks
// it contacts, which of them are dummies, how many status responses complete a
// room, and the fragments each real target must move. JSON names are fixed:
// agents and the published ConfigMaps use them.
type RoutePlan struct {
	DecodeTPRank int      `json:"decodeTPRank"`
	PlanKind     PlanKind `json:"planKind"`
	// TargetTPRank is the single real source when the plan has one (identity,
	// MLA without L1.5); every other target is then a dummy.
	TargetTPRank  *int  `json:"targetTPRank"`
	TargetTPRanks []int `json:"targetTPRanks"`
	// RequiredPrefillResponseNum is how many prefill ranks must report Success.
	RequiredPrefillResponseNum   int  `json:"requiredPrefillResponseNum"`
	SupportsRemoteSpecCandidates bool `json:"supportsRemoteSpecCandidates"`
	// IdlePrefillTPRanks are prefill TP ranks no decode rank pulls from; only
	// decode TP rank 0's plan lists them, and that rank sends each a dummy
	// registration and dummy requests so they complete their rooms.
	IdlePrefillTPRanks []int        `json:"idlePrefillTPRanks"`
	Targets            []PlanTarget `json:"targets"`
}

// PlanTarget is one prefill TP rank a decode rank sends messages to.
type PlanTarget struct {
	PrefillTPRank int  `json:"prefillTPRank"`
	IsDummy       bool `json:"isDummy"`
	// RequiredDstInfoNum is how many decode ranks will send this prefill rank a
	// request for the same room (its fan-out).
	RequiredDstInfoNum int                `json:"requiredDstInfoNum"`
	Fragments          []TransferFragment `json:"fragments"`
	// ContractFragments are what a source moves on the cache-contract wire
	// (Fragments is then empty); absent from v1 plans.
	ContractFragments []ContractFragment `json:"contractFragments,omitempty"`
}

// RealTargetCount is the number of targets that are not dummies.
func (p *RoutePlan) RealTargetCount() int {
	n := 0
	for _, t := range p.Targets {
		if !t.IsDummy {
			n++
		}
	}
	return n
}

// FragmentCount is the number of fragments over all targets.
func (p *RoutePlan) FragmentCount() int {
	n := 0
	for _, t := range p.Targets {
		n += len(t.Fragments)
	}
	return n
}
