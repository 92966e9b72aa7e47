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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PDPairStatus is what the operator found and published for the pair.
type PDPairStatus struct {
	// conditions are LayoutCompatible, PlansPublished, Ready,
	// DecodeAgentsCurrent, PlanNamesClear, LivePrefillMatches (and
	// kstatus's Reconciling and Stalled while True).
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// plan summarises the published route plans. It is absent while no plans
	// are published (the layout is incompatible or publishing failed).
	// +optional
	Plan *PlanSummary `json:"plan,omitempty"`

	// rankMap is, for a compatible pair of an engine that moves the KV
	// cache itself (vLLM, SGLang), which prefill ranks each decode rank
	// reads; absent for tokenspeed pairs, whose plan says it.
	// +optional
	RankMap *RankMapStatus `json:"rankMap,omitempty"`

	// derived are the buffers the operator derived from spec.model and plans
	// with; absent for explicit pairs and while the model cannot be read.
	// +optional
	Derived *DerivedBuffers `json:"derived,omitempty"`

	// contracts says, for a pair on wire CacheContract, which contracts the
	// verdict and the plans come from and when the operator read them.
	// +optional
	Contracts *ContractsStatus `json:"contracts,omitempty"`

	// livePrefill is what the prefill's bootstrap server last told of the
	// running prefill, and where it differs from spec.prefill, for a pair
	// whose engine's prefill tells its layout (sglang) and which names
	// spec.prefill.bootstrapAddress.
	// +optional
	LivePrefill *LivePrefillStatus `json:"livePrefill,omitempty"`

	// decodeFleet is what the operator sees of the pair's decode pods (those
	// labelled with this pair and role decode) and their agents.
	// +optional
	DecodeFleet *DecodeFleetStatus `json:"decodeFleet,omitempty"`

	// generations are the layout pairs served: the current spec's first,
	// then older ones still in use mid-rollout (at most MaxPlanGenerations).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Generations []PlanGeneration `json:"generations,omitempty"`
}

// DecodeFleetStatus counts the pair's decode pods and their agents.
type DecodeFleetStatus struct {
	// pods is the number of decode pods bound to the pair (not terminating).
	// +required
	Pods int32 `json:"pods"`
	// agentsReady is how many of them have a ready pdtopo-agent container.
	// +required
	AgentsReady int32 `json:"agentsReady"`
	// agentsCurrent is how many ready agents run the current plan
	// (status.plan.hash), as their probe address reports it.
	// +required
	AgentsCurrent int32 `json:"agentsCurrent"`
	// lagging names the pods whose agent is not ready or not current, and
	// why; at most MaxLaggingPods, the rest counted in the condition.
	// +listType=atomic
	// +optional
	Lagging []LaggingDecodePod `json:"lagging,omitempty"`
}

// MaxLaggingPods bounds DecodeFleetStatus.Lagging.
const MaxLaggingPods = 20

// LaggingDecodePod is a decode pod whose agent is not ready or runs an older plan.
type LaggingDecodePod struct {
	// pod is the pod's name.
	// +required
	Pod string `json:"pod"`
	// reason is AgentsNotReady or AgentsOnStalePlan.
	// +required
	Reason PDPairConditionReason `json:"reason"`
	// message says why, with the numbers (plan hashes, the agent's error).
	// +required
	Message string `json:"message"`
}

// PlanSummary summarises the route plans of every decode TP rank.
type PlanSummary struct {
	// kind is identity, fragmented or mla (contract pairs: identity or fragmented).
	// +kubebuilder:validation:Enum=identity;fragmented;mla
	// +required
	Kind string `json:"kind"`
	// decodeTPRanks is the number of plans: decode TP ranks per DP group.
	// +required
	DecodeTPRanks int32 `json:"decodeTPRanks"`
	// minTargetsPerDecodeRank is the fewest prefill ranks one decode rank
	// contacts (dummies included).
	// +required
	MinTargetsPerDecodeRank int32 `json:"minTargetsPerDecodeRank"`
	// maxTargetsPerDecodeRank is the most prefill ranks one decode rank
	// contacts (dummies included).
	// +required
	MaxTargetsPerDecodeRank int32 `json:"maxTargetsPerDecodeRank"`
	// prefillFanOut is, per prefill TP rank, how many decode TP ranks target it.
	// +listType=atomic
	// +optional
	PrefillFanOut []int32 `json:"prefillFanOut,omitempty"`
	// maxPrefillFanOut is the largest number of decode ranks served by one prefill rank.
	// +required
	MaxPrefillFanOut int32 `json:"maxPrefillFanOut"`
	// idlePrefillTPRanks are prefill TP ranks no decode rank pulls from; decode
	// TP rank 0 sends each a dummy registration so their rooms complete.
	// +listType=atomic
	// +optional
	IdlePrefillTPRanks []int32 `json:"idlePrefillTPRanks,omitempty"`
	// fragmentCount is the number of transfer fragments over all plans.
	// +required
	FragmentCount int64 `json:"fragmentCount"`

	// fragmentsPerPage is the most fragments one buffer of one page costs a
	// decode rank from one prefill rank: 0 when whole items move (identity,
	// MLA), 1 when every slice is whole token rows on both sides, and
	// tokensPerPage when a decode rank takes a head range of each token row
	// of a token-major page (prefill and decode ranks hold different heads).
	// +optional
	FragmentsPerPage int32 `json:"fragmentsPerPage,omitempty"`

	// pageCost explains FragmentsPerPage, e.g. "64 fragments per page ...:
	// decode rank 0 takes 2 of prefill rank 0's 8 heads ... from each of the
	// 64 token rows of a page ...".
	// +optional
	PageCost string `json:"pageCost,omitempty"`
	// hash is the content hash of the published plan set (hex SHA-256).
	// +required
	Hash string `json:"hash"`
	// indexSHA256 is the hex SHA-256 of the published index (the index
	// ConfigMap's index.json, which records every rank plan's SHA-256): an
	// agent reading the plans through the API (--pdpair) loads no other
	// index. Decode pods get the same word from the signed index (index.sig).
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	// +optional
	IndexSHA256 string `json:"indexSHA256,omitempty"`
	// publishedBytes is the size of the published plan data over all ConfigMaps.
	// +required
	PublishedBytes int64 `json:"publishedBytes"`
	// configMaps hold the plans; the first is the index.
	// +listType=atomic
	// +optional
	ConfigMaps []string `json:"configMaps,omitempty"`
}

// ContractsStatus is where a contract pair's contracts came from.
type ContractsStatus struct {
	// prefill is the prefill contract's source.
	// +required
	Prefill ContractSourceStatus `json:"prefill"`
	// decode is the decode contract's source.
	// +required
	Decode ContractSourceStatus `json:"decode"`
}

// ContractSourceStatus identifies the contract one verdict was made from.
type ContractSourceStatus struct {
	// source is where the contract comes from: Spec (spec.cacheContracts,
	// inline or a ConfigMap), PrefillBootstrap (the prefill's bootstrap
	// server) or AgentRegistration (what the decode engines registered
	// with their agents).
	// +required
	Source ContractSource `json:"source"`
	// from is the exact place: "spec.cacheContracts.prefill.inline",
	// "ConfigMap <name> key <key> (resourceVersion <v>)", the bootstrap
	// server's URL, or the pod, rank and agent URL.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	From string `json:"from,omitempty"`
	// sha256 is the hex SHA-256 of the contract as the engine re-encodes it
	// (the bytes a bootstrap server serves); empty when it did not decode
	// or there is none yet.
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// bytes is the size of the contract as read.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// observedAt is when the operator read these bytes first (a live
	// source is read again every refresh; the time moves when the bytes
	// change); absent while there is no contract.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// message says, for a live source, what is missing while there is no
	// contract yet, or why the last read failed while the verdict keeps
	// the contract read before (with the numbers).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Message string `json:"message,omitempty"`
}

// LivePrefillStatus is a running prefill's layout as its bootstrap server
// answers the decode's handshake (SGLang: the parallel info of
// try_ensure_parallel_info), compared with spec.prefill.
type LivePrefillStatus struct {
	// from is the URL read.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	From string `json:"from"`
	// observedAt is when the answer described here was read first (it is
	// read again every refresh; the time moves when the answer changes);
	// absent while there is none.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// attentionTensorParallelSize is the prefill's attention TP size
	// (attn_tp_size: --tp-size over the DP-attention size).
	// +optional
	AttentionTensorParallelSize int32 `json:"attentionTensorParallelSize,omitempty"`
	// dataParallelSize is its DP size (dp_size).
	// +optional
	DataParallelSize int32 `json:"dataParallelSize,omitempty"`
	// pipelineParallelSize is its PP size (pp_size).
	// +optional
	PipelineParallelSize int32 `json:"pipelineParallelSize,omitempty"`
	// contextParallelSize is its attention context-parallel size
	// (attn_cp_size); the API has no field for it and judges pairs at 1.
	// +optional
	ContextParallelSize int32 `json:"contextParallelSize,omitempty"`
	// tokensPerPage is its page size (page_size); absent when the server
	// reports none (the engine then skips the check).
	// +optional
	TokensPerPage int32 `json:"tokensPerPage,omitempty"`
	// kvCacheDtype is its --kv-cache-dtype (kv_cache_dtype); absent when
	// the server reports none.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	KVCacheDtype string `json:"kvCacheDtype,omitempty"`
	// differences are the values that differ from spec.prefill, in the
	// order the engine checks them.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Differences []LivePrefillDifference `json:"differences,omitempty"`
	// message says why the last read failed: while there is no answer, or
	// while the values above are those of an earlier read.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Message string `json:"message,omitempty"`
}

// LivePrefillDifference is one value the running prefill has other than
// the spec's.
type LivePrefillDifference struct {
	// field is the spec field to change (prefill.tokensPerPage); absent for
	// a value the API has no field for (attn_cp_size).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Field string `json:"field,omitempty"`
	// name is the engine's name of the value (page_size).
	// +kubebuilder:validation:MaxLength=64
	// +required
	Name string `json:"name"`
	// spec is the value the spec gives.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Spec string `json:"spec"`
	// live is the value the running prefill reports.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Live string `json:"live"`
}
