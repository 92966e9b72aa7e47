package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AttentionBackend names the attention family of the served model.
type AttentionBackend string

const (
	// AttentionMHA covers multi-head attention and its grouped variants (GQA, MQA):
	// KV heads are sharded across tensor-parallel ranks.
	AttentionMHA AttentionBackend = "MHA"
	// AttentionMLA is multi-head latent attention (DeepSeek-style): every rank
	// holds the whole latent KV cache.
	AttentionMLA AttentionBackend = "MLA"
)

// KVBufferKind is the role of a group of KV buffers in the engine's pointer order.
type KVBufferKind string

const (
	KVTargetK KVBufferKind = "TargetK"
	KVTargetV KVBufferKind = "TargetV"
	KVDraftK  KVBufferKind = "DraftK"
	KVDraftV  KVBufferKind = "DraftV"
)

// PDPair describes one prefill fleet and one decode fleet that exchange KV cache.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pdp
type PDPair struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PDPairSpec   `json:"spec,omitempty"`
	Status PDPairStatus `json:"status,omitempty"`
}

// PDPairList is a list of PDPairs.
//
// +kubebuilder:object:root=true
type PDPairList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PDPair `json:"items"`
}

// PDPairSpec is the layout of both fleets and of the buffers they exchange.
type PDPairSpec struct {
	// AttentionBackend is MHA (also GQA/MQA) or MLA.
	AttentionBackend AttentionBackend `json:"attentionBackend,omitempty"`

	// MLAL15Cache is true when the prefill fleet runs the MLA L1.5 cache.
	MLAL15Cache bool `json:"mlaL15Cache,omitempty"`

	// TokensPerPage is the number of tokens in one KV page. Pages are token-major.
	TokensPerPage *int32 `json:"tokensPerPage,omitempty"`

	// Prefill is the prefill fleet's parallel layout.
	Prefill FleetLayout `json:"prefill"`

	// Decode is the decode fleet's parallel layout.
	Decode FleetLayout `json:"decode"`

	// KVBuffers are the KV buffer groups in the engine's pointer order; they
	// expand to buffer indices 0..N-1.
	KVBuffers []KVBufferGroup `json:"kvBuffers"`

	// StateBuffers are Mamba-style recurrent state buffer groups, a second
	// index space walked after the KV buffers.
	StateBuffers []StateBufferGroup `json:"stateBuffers,omitempty"`
}

// FleetLayout is the tensor/data parallel layout of one role.
type FleetLayout struct {
	// TensorParallelSize is the whole attention world of the role (--tp-size).
	TensorParallelSize int32 `json:"tensorParallelSize"`

	// DataParallelSize is the number of DP attention groups; it divides
	// TensorParallelSize.
	DataParallelSize *int32 `json:"dataParallelSize,omitempty"`

	// BootstrapAddress is the host:port of the role's bootstrap server, used by agents.
	BootstrapAddress string `json:"bootstrapAddress,omitempty"`
}

// BufferGeometry is the per-page geometry shared by every buffer of a group.
type BufferGeometry struct {
	// Count is the number of buffers in the group (one per layer).
	Count int32 `json:"count"`

	// DecodeItemBytes is the size of one page of one buffer on one decode rank.
	DecodeItemBytes int64 `json:"decodeItemBytes"`

	// PrefillItemBytes is the size of one page on one prefill rank. Defaults to
	// decodeItemBytes * decodeTP / prefillTP (per-DP TP sizes, integer division).
	PrefillItemBytes *int64 `json:"prefillItemBytes,omitempty"`

	// DecodeUnitBytes is the size of the smallest movable piece on decode
	// (one KV head of one token, one state channel). Defaults to 1.
	DecodeUnitBytes *int64 `json:"decodeUnitBytes,omitempty"`

	// PrefillUnitBytes is the same on prefill. Defaults to 1.
	PrefillUnitBytes *int64 `json:"prefillUnitBytes,omitempty"`
}

// KVBufferGroup is a run of KV buffers of one kind.
type KVBufferGroup struct {
	// Kind is TargetK, TargetV, DraftK or DraftV.
	Kind KVBufferKind `json:"kind"`

	BufferGeometry `json:",inline"`
}

// StateBufferGroup is a run of recurrent state buffers.
type StateBufferGroup struct {
	BufferGeometry `json:",inline"`
}

// PDPairStatus is what the operator found and published for the pair.
type PDPairStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: LayoutCompatible, PlansPublished, Ready.
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Plan summarises the published route plans.
	Plan *PlanSummary `json:"plan,omitempty"`
}

// PlanSummary summarises the route plans of every decode TP rank.
type PlanSummary struct {
	// Kind is identity, fragmented or mla.
	Kind string `json:"kind,omitempty"`
	// MinTargetsPerDecodeRank and MaxTargetsPerDecodeRank bound how many prefill
	// ranks one decode rank contacts.
	MinTargetsPerDecodeRank int32 `json:"minTargetsPerDecodeRank,omitempty"`
	MaxTargetsPerDecodeRank int32 `json:"maxTargetsPerDecodeRank,omitempty"`
	// MaxPrefillFanOut is the largest number of decode ranks served by one prefill rank.
	MaxPrefillFanOut int32 `json:"maxPrefillFanOut,omitempty"`
	// IdlePrefillTPRanks are prefill TP ranks no decode rank pulls from.
	IdlePrefillTPRanks []int32 `json:"idlePrefillTPRanks,omitempty"`
	// FragmentCount is the number of transfer fragments over all plans.
	FragmentCount int64 `json:"fragmentCount,omitempty"`
	// Hash is the content hash of the published plans.
	Hash string `json:"hash,omitempty"`
	// ConfigMaps hold the plans; the first is the index.
	ConfigMaps []string `json:"configMaps,omitempty"`
}
