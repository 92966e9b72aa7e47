package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PDPairStatus is what the operator found and published for the pair.
type PDPairStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: LayoutCompatible, PlansPublished, Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Plan summarises the published route plans. It is absent while no plans
	// are published (the layout is incompatible or publishing failed).
	// +optional
	Plan *PlanSummary `json:"plan,omitempty"`
}

// PlanSummary summarises the route plans of every decode TP rank.
type PlanSummary struct {
	// Kind is identity, fragmented or mla.
	// +kubebuilder:validation:Enum=identity;fragmented;mla
	Kind string `json:"kind"`
	// DecodeTPRanks is the number of plans: decode TP ranks per DP group.
	DecodeTPRanks int32 `json:"decodeTPRanks"`
	// MinTargetsPerDecodeRank and MaxTargetsPerDecodeRank bound how many prefill
	// ranks one decode rank contacts (dummies included).
	MinTargetsPerDecodeRank int32 `json:"minTargetsPerDecodeRank"`
	MaxTargetsPerDecodeRank int32 `json:"maxTargetsPerDecodeRank"`
	// PrefillFanOut is, per prefill TP rank, how many decode TP ranks target it.
	// +listType=atomic
	// +optional
	PrefillFanOut []int32 `json:"prefillFanOut,omitempty"`
	// MaxPrefillFanOut is the largest number of decode ranks served by one prefill rank.
	MaxPrefillFanOut int32 `json:"maxPrefillFanOut"`
	// IdlePrefillTPRanks are prefill TP ranks no decode rank pulls from; decode
	// TP rank 0 sends each a dummy registration so their rooms complete.
	// +listType=atomic
	// +optional
	IdlePrefillTPRanks []int32 `json:"idlePrefillTPRanks,omitempty"`
	// FragmentCount is the number of transfer fragments over all plans.
	FragmentCount int64 `json:"fragmentCount"`
	// Hash is the content hash of the published plan set (hex SHA-256).
	Hash string `json:"hash"`
	// PublishedBytes is the size of the published plan data over all ConfigMaps.
	PublishedBytes int64 `json:"publishedBytes"`
	// ConfigMaps hold the plans; the first is the index.
	// +listType=atomic
	// +optional
	ConfigMaps []string `json:"configMaps,omitempty"`
}
