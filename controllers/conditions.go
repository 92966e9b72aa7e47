package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Condition types of a PDPair.
const (
	// ConditionLayoutCompatible: the prefill and decode layouts can exchange KV cache.
	ConditionLayoutCompatible = "LayoutCompatible"
	// ConditionPlansPublished: route plans for this generation are in ConfigMaps.
	ConditionPlansPublished = "PlansPublished"
	// ConditionReady: both of the above.
	ConditionReady = "Ready"
)

// Condition reasons the controller sets itself. LayoutCompatible=False uses
// the planner's reasons (transferplan.Reason) verbatim, see layoutReason.
const (
	// ReasonCompatible: LayoutCompatible=True.
	ReasonCompatible = "Compatible"
	// ReasonPlanningFailed: the planner failed without saying why in a typed
	// way; a bug, reported rather than hidden.
	ReasonPlanningFailed = "PlanningFailed"

	// ReasonPublished: PlansPublished=True.
	ReasonPublished = "Published"
	// ReasonLayoutIncompatible: no plans, because the layout is incompatible
	// (PlansPublished=False, Ready=False); published plans were withdrawn.
	ReasonLayoutIncompatible = "LayoutIncompatible"
	// ReasonPublishFailed: writing the ConfigMaps failed; retried with backoff.
	ReasonPublishFailed = "PublishFailed"
	// ReasonConfigMapConflict: a ConfigMap with a plan ConfigMap's name exists
	// and is not controlled by this PDPair; the operator will not overwrite it.
	ReasonConfigMapConflict = "ConfigMapConflict"
	// ReasonRankTooLarge: one decode rank's plan alone does not fit a ConfigMap.
	ReasonRankTooLarge = string(planstore.ReasonRankTooLarge)
	// ReasonIndexTooLarge: the plan index does not fit a ConfigMap.
	ReasonIndexTooLarge = string(planstore.ReasonIndexTooLarge)
	// ReasonPlansNotEncodable: any other reason the plan set could not be encoded.
	ReasonPlansNotEncodable = "PlansNotEncodable"

	// ReasonReady: Ready=True.
	ReasonReady = "Ready"
	// ReasonPlansNotPublished: Ready=False because the layout is compatible
	// but its plans are not (yet) published.
	ReasonPlansNotPublished = "PlansNotPublished"
)

// layoutReasons maps every planner reason to the LayoutCompatible reason it
// becomes; they are the same words, but the table makes the contract explicit
// and a test checks that no planner reason is missing.
var layoutReasons = map[transferplan.Reason]string{
	transferplan.ReasonInvalidLayout:              "InvalidLayout",
	transferplan.ReasonUnitSizeMismatch:           "UnitSizeMismatch",
	transferplan.ReasonItemNotUnitAligned:         "ItemNotUnitAligned",
	transferplan.ReasonUnsupportedHeterogeneousTP: "UnsupportedHeterogeneousTP",
	transferplan.ReasonShardNotAligned:            "ShardNotAligned",
	transferplan.ReasonItemSmallerThanShard:       "ItemSmallerThanShard",
	transferplan.ReasonMLAL15RequiresMLA:          "MLAL15RequiresMLA",
	transferplan.ReasonStridedPagesNeedProtocolV2: "StridedPagesNeedProtocolV2",
	transferplan.ReasonRankOutOfRange:             "RankOutOfRange",
}

// layoutReason is the LayoutCompatible=False reason for a planner reason. A
// reason the table does not know yet (the planner grew one) is still a typed,
// CamelCase code, so it is used as is rather than hidden behind a generic one.
func layoutReason(r transferplan.Reason) string {
	if reason, ok := layoutReasons[r]; ok {
		return reason
	}
	if r == "" {
		return ReasonPlanningFailed
	}
	return string(r)
}

// publishReasons maps encoder failures to PlansPublished reasons.
var publishReasons = map[planstore.Reason]string{
	planstore.ReasonRankTooLarge:  ReasonRankTooLarge,
	planstore.ReasonIndexTooLarge: ReasonIndexTooLarge,
}

func publishReason(r planstore.Reason) string {
	if reason, ok := publishReasons[r]; ok {
		return reason
	}
	return ReasonPlansNotEncodable
}

// setCondition is the one way conditions are written: it stamps the PDPair's
// generation on every condition, and meta.SetStatusCondition keeps
// lastTransitionTime unless the status flips.
func setCondition(pair *pdv1.PDPair, condType string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&pair.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             s,
		Reason:             reason,
		Message:            truncate(message, maxConditionMessage),
		ObservedGeneration: pair.Generation,
	})
}

// maxConditionMessage is the API's limit on a condition message.
const maxConditionMessage = 32768

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
