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

// Reasons is every Reason the planner can return, in declaration order.
// Code that maps reasons (the controller's condition table) tests against
// this list, so that a reason added here without a mapping fails a test; a
// test of this package checks that the list names every Reason constant.
func Reasons() []Reason {
	return []Reason{
		ReasonInvalidLayout,
		ReasonUnitSizeMismatch,
		ReasonItemNotUnitAligned,
		ReasonUnsupportedHeterogeneousTP,
		ReasonShardNotAligned,
		ReasonItemSmallerThanShard,
		ReasonMLAL15RequiresMLA,
		ReasonMLAItemSizeMismatch,
		ReasonWholeStateCopyUnsafe,
		ReasonItemNotTokenAligned,
		// Retired (never returned any more); listed so that conditions
		// written by older operators stay mapped.
		ReasonStridedPagesNeedProtocolV2,
		ReasonRankOutOfRange,
		ReasonContractInvalid,
		ReasonContractTooLarge,
		ReasonContractUnsupportedValue,
		ReasonContractTPOutOfRange,
		ReasonContractMismatchPrefixGranularity,
		ReasonContractMismatchGroupOrder,
		ReasonContractMismatchGroupSemantics,
		ReasonContractMismatchFieldOrder,
		ReasonContractMismatchFieldSemantics,
		ReasonContractMismatchRankGeometry,
		ReasonContractShardsNotDividingTP,
		ReasonContractNoSourceFragments,
	}
}
