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

// Planner is what the planner of either wire answers for one pair
// (planv1.Planner for a v1 layout, plancontract.Planner for two cache
// contracts), with everything that does not depend on the decode rank
// computed when it was made: the operator publishes, summarises and
// budgets plans through it without asking which wire the pair speaks.
type Planner interface {
	// Kind is the plan kind every decode rank of the pair gets.
	Kind() PlanKind
	// DecodeTPSize is the number of decode TP ranks per DP group: the
	// number of plans.
	DecodeTPSize() int
	// IdlePrefillTPRanks are the prefill TP ranks no decode rank pulls
	// from; decode TP rank 0 sends each a dummy so it completes its rooms.
	IdlePrefillTPRanks() []int
	// PrefillFanOut is, per prefill TP rank, how many decode ranks send
	// it a request.
	PrefillFanOut() []int
	// RoutePlan is one decode TP rank's plan; a *LayoutError with
	// ReasonRankOutOfRange for a rank that does not exist.
	RoutePlan(decodeTPRank int) (RoutePlan, error)
	// RoutePlans is every decode TP rank's plan, ascending.
	RoutePlans() []RoutePlan
	// Record is the layout record published with the plans.
	Record() LayoutRecord
}
