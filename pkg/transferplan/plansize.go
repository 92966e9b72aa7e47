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

// Upper bounds of the JSON encoding/json writes for a RoutePlan and a
// PlanTarget, without their numbers; each element also pays one separating
// comma. Each wire's size estimate adds its fragments to them.
const (
	// PlanJSONFixedBytes bounds a RoutePlan without its numbers and targets.
	PlanJSONFixedBytes = int64(len(`{"decodeTPRank":,"planKind":"fragmented","targetTPRank":,"targetTPRanks":[],` +
		`"requiredPrefillResponseNum":,"supportsRemoteSpecCandidates":false,"idlePrefillTPRanks":[],"targets":[]}`))
	// TargetJSONFixedBytes bounds a PlanTarget without its numbers and fragments.
	TargetJSONFixedBytes = int64(len(`{"prefillTPRank":,"isDummy":false,"requiredDstInfoNum":,"fragments":[]},`))
)

// Digits is the length of the decimal form of a non-negative n: what a
// number costs in plan JSON.
func Digits(n int64) int64 {
	d := int64(1)
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
