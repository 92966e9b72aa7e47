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

package controllers

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// layoutReasons maps every planner reason to the LayoutCompatible reason it
// becomes; they are the same words, but the table makes the contract explicit
// and a test checks that no planner reason is missing.
var layoutReasons = map[transferplan.Reason]pdv1.PDPairConditionReason{
	transferplan.ReasonInvalidLayout:              pdv1.ReasonInvalidLayout,
	transferplan.ReasonUnitSizeMismatch:           pdv1.ReasonUnitSizeMismatch,
	transferplan.ReasonItemNotUnitAligned:         pdv1.ReasonItemNotUnitAligned,
	transferplan.ReasonUnsupportedHeterogeneousTP: pdv1.ReasonUnsupportedHeterogeneousTP,
	transferplan.ReasonShardNotAligned:            pdv1.ReasonShardNotAligned,
	transferplan.ReasonItemSmallerThanShard:       pdv1.ReasonItemSmallerThanShard,
	transferplan.ReasonMLAL15RequiresMLA:          pdv1.ReasonMLAL15RequiresMLA,
	transferplan.ReasonMLAItemSizeMismatch:        pdv1.ReasonMLAItemSizeMismatch,
	transferplan.ReasonWholeStateCopyUnsafe:       pdv1.ReasonWholeStateCopyUnsafe,
	transferplan.ReasonItemNotTokenAligned:        pdv1.ReasonItemNotTokenAligned,
	transferplan.ReasonStridedPagesNeedProtocolV2: pdv1.ReasonStridedPagesNeedProtocolV2,
	transferplan.ReasonRankOutOfRange:             pdv1.ReasonRankOutOfRange,
	// The model derivation's reasons (pkg/modelgeom) and the operator's
	// own, which reach the condition as LayoutErrors of engine.Engine.Resolve.
	transferplan.Reason(modelgeom.ReasonInvalidModelConfig):      pdv1.ReasonInvalidModelConfig,
	transferplan.Reason(modelgeom.ReasonUnsupportedKVCacheDtype): pdv1.ReasonUnsupportedKVCacheDtype,
	transferplan.Reason(modelgeom.ReasonTPDoesNotSplitHeads):     pdv1.ReasonTPDoesNotSplitHeads,
	transferplan.Reason(pdv1.ReasonModelConfigUnavailable):       pdv1.ReasonModelConfigUnavailable,
	// A live prefill whose size is not the spec's (contracts.go).
	transferplan.Reason(pdv1.ReasonContractParallelismMismatch): pdv1.ReasonContractParallelismMismatch,
	// A bootstrap address outside --bootstrap-address-allowlist (livecontracts_kept.go).
	transferplan.Reason(pdv1.ReasonBootstrapAddressNotAllowed): pdv1.ReasonBootstrapAddressNotAllowed,

	transferplan.ReasonContractInvalid:                   pdv1.ReasonContractInvalid,
	transferplan.ReasonContractTooLarge:                  pdv1.ReasonContractTooLarge,
	transferplan.ReasonContractUnsupportedValue:          pdv1.ReasonContractUnsupportedValue,
	transferplan.ReasonContractTPOutOfRange:              pdv1.ReasonContractTPOutOfRange,
	transferplan.ReasonContractMismatchPrefixGranularity: pdv1.ReasonContractMismatchPrefixGranularity,
	transferplan.ReasonContractMismatchGroupOrder:        pdv1.ReasonContractMismatchGroupOrder,
	transferplan.ReasonContractMismatchGroupSemantics:    pdv1.ReasonContractMismatchGroupSemantics,
	transferplan.ReasonContractMismatchFieldOrder:        pdv1.ReasonContractMismatchFieldOrder,
	transferplan.ReasonContractMismatchFieldSemantics:    pdv1.ReasonContractMismatchFieldSemantics,
	transferplan.ReasonContractMismatchRankGeometry:      pdv1.ReasonContractMismatchRankGeometry,
	transferplan.ReasonContractShardsNotDividingTP:       pdv1.ReasonContractShardsNotDividingTP,
	transferplan.ReasonContractNoSourceFragments:         pdv1.ReasonContractNoSourceFragments,

	// The reasons of engines vllm and sglang (engines.Reasons).
	transferplan.Reason(pdv1.ReasonInvalidPair):               pdv1.ReasonInvalidPair,
	transferplan.Reason(pdv1.ReasonUnsupportedConnector):      pdv1.ReasonUnsupportedConnector,
	transferplan.Reason(pdv1.ReasonTPNotDivisible):            pdv1.ReasonTPNotDivisible,
	transferplan.Reason(pdv1.ReasonKVCacheDtypeMismatch):      pdv1.ReasonKVCacheDtypeMismatch,
	transferplan.Reason(pdv1.ReasonEngineVersionMismatch):     pdv1.ReasonEngineVersionMismatch,
	transferplan.Reason(pdv1.ReasonBlockSizeNotMultiple):      pdv1.ReasonBlockSizeNotMultiple,
	transferplan.Reason(pdv1.ReasonReplicatedPrefillKV):       pdv1.ReasonReplicatedPrefillKV,
	transferplan.Reason(pdv1.ReasonKVCacheLayoutMismatch):     pdv1.ReasonKVCacheLayoutMismatch,
	transferplan.Reason(pdv1.ReasonLayoutNotBlockContiguous):  pdv1.ReasonLayoutNotBlockContiguous,
	transferplan.Reason(pdv1.ReasonBlockSizeNotEqual):         pdv1.ReasonBlockSizeNotEqual,
	transferplan.Reason(pdv1.ReasonBlockLengthMismatch):       pdv1.ReasonBlockLengthMismatch,
	transferplan.Reason(pdv1.ReasonHeadSplitWithHeteroBlocks): pdv1.ReasonHeadSplitWithHeteroBlocks,
	transferplan.Reason(pdv1.ReasonNHDMultiSourceRead):        pdv1.ReasonNHDMultiSourceRead,
	transferplan.Reason(pdv1.ReasonPageSizeMismatch):          pdv1.ReasonPageSizeMismatch,
	transferplan.Reason(pdv1.ReasonPPSizeMismatch):            pdv1.ReasonPPSizeMismatch,
	transferplan.Reason(pdv1.ReasonTPRatioNotDivisible):       pdv1.ReasonTPRatioNotDivisible,
	transferplan.Reason(pdv1.ReasonHybridStateTPMismatch):     pdv1.ReasonHybridStateTPMismatch,
}

// layoutReason is the LayoutCompatible=False reason for a planner reason. A
// reason the table does not know yet (the planner grew one) is still a typed,
// CamelCase code, so it is used as is rather than hidden behind a generic one.
func layoutReason(r transferplan.Reason) pdv1.PDPairConditionReason {
	if reason, ok := layoutReasons[r]; ok {
		return reason
	}
	if r == "" {
		return pdv1.ReasonPlanningFailed
	}
	return pdv1.PDPairConditionReason(r)
}

// publishReasons maps encoder failures to PlansPublished reasons.
var publishReasons = map[planstore.Reason]pdv1.PDPairConditionReason{
	planstore.ReasonRankTooLarge:  pdv1.ReasonRankTooLarge,
	planstore.ReasonIndexTooLarge: pdv1.ReasonIndexTooLarge,
	planstore.ReasonPlanTooLarge:  pdv1.ReasonPlanTooLarge,
}

func publishReason(r planstore.Reason) pdv1.PDPairConditionReason {
	if reason, ok := publishReasons[r]; ok {
		return reason
	}
	return pdv1.ReasonPlansNotEncodable
}

// setCondition is the one way conditions are written: it stamps the PDPair's
// generation on every condition, and meta.SetStatusCondition keeps
// lastTransitionTime unless the status flips.
func setCondition(pair *pdv1.PDPair, condType pdv1.PDPairConditionType, status bool, reason pdv1.PDPairConditionReason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	setConditionStatus(pair, condType, s, reason, message)
}

// setConditionStatus is setCondition for a condition that may be Unknown.
func setConditionStatus(pair *pdv1.PDPair, condType pdv1.PDPairConditionType, s metav1.ConditionStatus, reason pdv1.PDPairConditionReason, message string) {
	meta.SetStatusCondition(&pair.Status.Conditions, metav1.Condition{
		Type:               string(condType),
		Status:             s,
		Reason:             string(reason),
		Message:            truncate(message, maxConditionMessage),
		ObservedGeneration: pair.Generation,
	})
}

// maxConditionMessage is the API's limit on a condition message.
const maxConditionMessage = 32768

// truncate cuts s to at most n bytes, ending in "..." when cut, and never
// inside a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
