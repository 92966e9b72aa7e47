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

// RankMapReadsShown is the most decode ranks status.rankMap.reads lists;
// `pdtopo plan NAME -o json` lists every one.
const RankMapReadsShown = 32

// RankMapStatus is, for an engine whose own connector moves the KV cache
// (vLLM, SGLang), which prefill ranks its decode ranks read, as the
// engine's rules map them. No plans are published for such pairs; this is
// what the operator knows of their transfers.
type RankMapStatus struct {
	// decodeRanks is the number of decode ranks mapped (SGLang with DP
	// attention: every global decode rank).
	// +kubebuilder:validation:Minimum=0
	// +required
	DecodeRanks int32 `json:"decodeRanks"`
	// minReadsPerDecodeRank is the fewest prefill ranks one decode rank
	// reads (ranks it only notifies left out).
	// +kubebuilder:validation:Minimum=0
	// +required
	MinReadsPerDecodeRank int32 `json:"minReadsPerDecodeRank"`
	// maxReadsPerDecodeRank is the most prefill ranks one decode rank reads.
	// +kubebuilder:validation:Minimum=0
	// +required
	MaxReadsPerDecodeRank int32 `json:"maxReadsPerDecodeRank"`
	// reads says, for the first decode ranks, the prefill ranks each reads,
	// as "decode 1 reads prefill 2-3" (the engine's numbering: docs/engines).
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	Reads []string `json:"reads,omitempty"`
	// moreDecodeRanks is how many decode ranks reads leaves out.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MoreDecodeRanks int32 `json:"moreDecodeRanks,omitempty"`
}
