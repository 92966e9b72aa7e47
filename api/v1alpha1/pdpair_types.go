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

import (
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AttentionBackend names the attention family of the served model.
// +kubebuilder:validation:Enum=MHA;MLA
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
// +kubebuilder:validation:Enum=TargetK;TargetV;DraftK;DraftV
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
// +kubebuilder:resource:shortName=pdp,categories=pdtopo
// +kubebuilder:printcolumn:name="Prefill TP",type=integer,JSONPath=`.spec.prefill.tensorParallelSize`
// +kubebuilder:printcolumn:name="Prefill DP",type=integer,JSONPath=`.spec.prefill.dataParallelSize`
// +kubebuilder:printcolumn:name="Decode TP",type=integer,JSONPath=`.spec.decode.tensorParallelSize`
// +kubebuilder:printcolumn:name="Decode DP",type=integer,JSONPath=`.spec.decode.dataParallelSize`
// +kubebuilder:printcolumn:name="Wire",type=string,priority=1,JSONPath=`.spec.wire`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.plan.kind`
// +kubebuilder:printcolumn:name="Compatible",type=string,JSONPath=`.status.conditions[?(@.type=="LayoutCompatible")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="LayoutCompatible")].reason`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Decode Pods",type=integer,JSONPath=`.status.decodeFleet.pods`
// +kubebuilder:printcolumn:name="Agents Ready",type=integer,JSONPath=`.status.decodeFleet.agentsReady`
// +kubebuilder:printcolumn:name="Agents Current",type=string,JSONPath=`.status.conditions[?(@.type=="DecodeAgentsCurrent")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// The name is the value of the pd.pdtopo.dev/pdpair label on the plan ConfigMaps.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters: it is the value of the pd.pdtopo.dev/pdpair label on the plan ConfigMaps"
type PDPair struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata; its name labels the plan ConfigMaps.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the layout of both fleets and of the buffers they exchange.
	//
	// Its rules are structural: an object that breaks one can never be
	// planned. Whether two well-formed layouts can exchange KV cache is the
	// operator's answer, in the LayoutCompatible condition.
	// +required
	Spec PDPairSpec `json:"spec"`
	// status is what the operator found and published for the pair.
	// +optional
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
//
// The rules below are structural: an object that breaks one can never be
// planned. Whether two well-formed layouts can exchange KV cache is the
// operator's answer, in the LayoutCompatible condition.
//
// +kubebuilder:validation:XValidation:rule="!has(self.mlaL15Cache) || !self.mlaL15Cache || self.attentionBackend == 'MLA' || has(self.model)",fieldPath=".mlaL15Cache",reason=FieldValueForbidden,message="mlaL15Cache (the prefill's MLA L1.5 cache) is only supported with attentionBackend MLA"
// +kubebuilder:validation:XValidation:rule="!(has(self.model) && has(self.kvBuffers))",fieldPath=".kvBuffers",reason=FieldValueForbidden,message="give the model (spec.model) or its buffers (spec.kvBuffers), not both: with spec.model the operator derives kvBuffers and stateBuffers"
// +kubebuilder:validation:XValidation:rule="!(has(self.model) && has(self.stateBuffers))",fieldPath=".stateBuffers",reason=FieldValueForbidden,message="with spec.model the operator derives stateBuffers; give the model or the buffers, not both"
// +kubebuilder:validation:XValidation:rule="self.wire == 'CacheContract' || has(self.model) || has(self.kvBuffers)",fieldPath=".kvBuffers",reason=FieldValueRequired,message="give the model (spec.model with kvCacheDtype) or its KV buffers (spec.kvBuffers); a pair with wire CacheContract gives cacheContracts instead"
// +kubebuilder:validation:XValidation:rule="!has(self.model) || has(self.kvCacheDtype) || !(!has(self.engine) || self.engine.name == 'tokenspeed')",fieldPath=".kvCacheDtype",reason=FieldValueRequired,message="spec.model needs kvCacheDtype, the KV cache dtype the engines run with (--kv-cache-dtype)"
// +kubebuilder:validation:XValidation:rule="has(self.model) || (!has(self.kvCacheDtype) && !has(self.prefill.kvCacheDtype) && !has(self.decode.kvCacheDtype))",fieldPath=".kvCacheDtype",reason=FieldValueForbidden,message="kvCacheDtype describes spec.model's cache; with kvBuffers the dtype is in their byte sizes"
// +kubebuilder:validation:XValidation:rule="self.attentionBackend != 'MHA' || !has(self.kvBuffers) || self.kvBuffers.map(g, g.kind == 'TargetK' ? g.count : 0).sum() == self.kvBuffers.map(g, g.kind == 'TargetV' ? g.count : 0).sum()",fieldPath=".kvBuffers",message="with MHA every layer has a K and a V buffer: the TargetK counts of all groups must add up to the TargetV counts"
// +kubebuilder:validation:XValidation:rule="self.attentionBackend != 'MHA' || !has(self.kvBuffers) || self.kvBuffers.map(g, g.kind == 'DraftK' ? g.count : 0).sum() == self.kvBuffers.map(g, g.kind == 'DraftV' ? g.count : 0).sum()",fieldPath=".kvBuffers",message="with MHA every draft layer has a K and a V buffer: the DraftK counts of all groups must add up to the DraftV counts"
// +kubebuilder:validation:XValidation:rule="self.wire != 'CacheContract' || (!has(self.model) && !has(self.kvBuffers) && !has(self.stateBuffers))",fieldPath=".wire",reason=FieldValueForbidden,message="on wire CacheContract the layout is the two contracts (cacheContracts): remove model, kvBuffers and stateBuffers"
// +kubebuilder:validation:XValidation:rule="self.wire != 'CacheContract' || (has(self.cacheContracts) && has(self.cacheContracts.prefill)) || (has(self.prefill.bootstrapAddress) && self.prefill.bootstrapAddress.size() > 0)",fieldPath=".prefill.bootstrapAddress",reason=FieldValueRequired,message="wire CacheContract needs the prefill's contract: give cacheContracts.prefill, or prefill.bootstrapAddress for the operator to read it from the prefill's bootstrap server"
// +kubebuilder:validation:XValidation:rule="self.wire == 'CacheContract' || !has(self.cacheContracts)",fieldPath=".cacheContracts",reason=FieldValueForbidden,message="cacheContracts are only read on wire CacheContract; set wire: CacheContract or remove them"
// +kubebuilder:validation:XValidation:rule="!has(self.prefill.kvCacheLayout) || (has(self.engine) && self.engine.name == 'vllm')",fieldPath=".prefill.kvCacheLayout",reason=FieldValueForbidden,messageExpression="'prefill.kvCacheLayout (VLLM_KV_CACHE_LAYOUT) applies to engine vllm only, not to engine ' + (has(self.engine) ? self.engine.name : 'tokenspeed') + ': remove it'"
// +kubebuilder:validation:XValidation:rule="!has(self.decode.kvCacheLayout) || (has(self.engine) && self.engine.name == 'vllm')",fieldPath=".decode.kvCacheLayout",reason=FieldValueForbidden,messageExpression="'decode.kvCacheLayout (VLLM_KV_CACHE_LAYOUT) applies to engine vllm only, not to engine ' + (has(self.engine) ? self.engine.name : 'tokenspeed') + ': remove it'"
// +kubebuilder:validation:XValidation:rule="!has(self.prefill.pipelineParallelSize) || (has(self.engine) && self.engine.name == 'sglang')",fieldPath=".prefill.pipelineParallelSize",reason=FieldValueForbidden,messageExpression="'prefill.pipelineParallelSize (--pp-size) applies to engine sglang only, not to engine ' + (has(self.engine) ? self.engine.name : 'tokenspeed') + ': remove it'"
// +kubebuilder:validation:XValidation:rule="!has(self.decode.pipelineParallelSize) || (has(self.engine) && self.engine.name == 'sglang')",fieldPath=".decode.pipelineParallelSize",reason=FieldValueForbidden,messageExpression="'decode.pipelineParallelSize (--pp-size) applies to engine sglang only, not to engine ' + (has(self.engine) ? self.engine.name : 'tokenspeed') + ': remove it'"
// +kubebuilder:validation:XValidation:rule="!has(self.prefill.tokensPerPage) || !(!has(self.engine) || self.engine.name == 'tokenspeed')",fieldPath=".prefill.tokensPerPage",reason=FieldValueForbidden,messageExpression="'prefill.tokensPerPage applies to engines vllm and sglang, not to engine tokenspeed: its roles share spec.tokensPerPage'"
// +kubebuilder:validation:XValidation:rule="!has(self.decode.tokensPerPage) || !(!has(self.engine) || self.engine.name == 'tokenspeed')",fieldPath=".decode.tokensPerPage",reason=FieldValueForbidden,messageExpression="'decode.tokensPerPage applies to engines vllm and sglang, not to engine tokenspeed: its roles share spec.tokensPerPage'"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine.name != 'vllm' || has(self.prefill.tokensPerPage)",fieldPath=".prefill.tokensPerPage",reason=FieldValueRequired,messageExpression="'engine vllm needs prefill.tokensPerPage, its --block-size'"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine.name != 'vllm' || has(self.decode.tokensPerPage)",fieldPath=".decode.tokensPerPage",reason=FieldValueRequired,messageExpression="'engine vllm needs decode.tokensPerPage, its --block-size'"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine.name != 'vllm' || !has(self.prefill.dataParallelSize) || self.prefill.dataParallelSize == 1",fieldPath=".prefill.dataParallelSize",reason=FieldValueForbidden,messageExpression="'prefill.dataParallelSize is DP attention, which engine vllm does not run: each vLLM data-parallel engine is judged alone; leave prefill.dataParallelSize at 1'"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine.name != 'vllm' || !has(self.decode.dataParallelSize) || self.decode.dataParallelSize == 1",fieldPath=".decode.dataParallelSize",reason=FieldValueForbidden,messageExpression="'decode.dataParallelSize is DP attention, which engine vllm does not run: each vLLM data-parallel engine is judged alone; leave decode.dataParallelSize at 1'"
// +kubebuilder:validation:XValidation:rule="(!has(self.engine) || self.engine.name == 'tokenspeed') || self.wire == 'V1'",fieldPath=".wire",reason=FieldValueForbidden,messageExpression="'spec.wire is the protocol of tokenspeed; engine ' + self.engine.name + ' moves KV cache through engine.kvConnector: remove wire'"
// +kubebuilder:validation:XValidation:rule="(!has(self.engine) || self.engine.name == 'tokenspeed') || has(self.model)",fieldPath=".model",reason=FieldValueRequired,messageExpression="'engine ' + self.engine.name + ' judges the pair from the model: give spec.model (its hfConfig)'"
// +kubebuilder:validation:XValidation:rule="(!has(self.engine) || self.engine.name == 'tokenspeed') || !has(self.mlaL15Cache) || !self.mlaL15Cache",fieldPath=".mlaL15Cache",reason=FieldValueForbidden,messageExpression="'mlaL15Cache is a cache of tokenspeed, not of engine ' + self.engine.name + ': remove it'"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine.name != 'vllm' || has(self.prefill.engineVersion) == has(self.decode.engineVersion)",fieldPath=".decode.engineVersion",reason=FieldValueRequired,messageExpression="'engine vllm compares the engineVersion of both roles (its handshake hashes the version): give engineVersion on both roles or on neither; prefill gives ' + (has(self.prefill.engineVersion) ? self.prefill.engineVersion : 'none') + ', decode ' + (has(self.decode.engineVersion) ? self.decode.engineVersion : 'none')"
// +kubebuilder:validation:XValidation:rule="!has(self.kvBuffers) || self.kvBuffers.map(g, g.count).sum() <= 16384",fieldPath=".kvBuffers",message="the KV buffer groups may hold at most 16384 buffers in all"
// +kubebuilder:validation:XValidation:rule="!has(self.stateBuffers) || self.stateBuffers.map(g, g.count).sum() <= 16384",fieldPath=".stateBuffers",message="the state buffer groups may hold at most 16384 buffers in all"
type PDPairSpec struct {
	// engine is the serving engine both roles run, whose rules judge the
	// pair: tokenspeed (when engine is absent), vllm or sglang. Fields that
	// do not apply to the engine named are refused.
	// +optional
	Engine *EngineSpec `json:"engine,omitempty"`

	// wire is the decode ↔ prefill protocol the engines speak: V1,
	// tokenspeed's first, fragment wire (the layout is given as buffer
	// geometry), or CacheContract, its later cache-contract wire (the layout
	// is the two roles' cache transfer contracts, cacheContracts).
	// +kubebuilder:default=V1
	// +optional
	Wire Wire `json:"wire,omitempty"`

	// cacheContracts are the prefill's and the decode's cache transfer
	// contracts, for wire CacheContract. Such a pair needs only these and
	// each role's tensorParallelSize (and dataParallelSize where not 1);
	// attentionBackend, kvBuffers and tokensPerPage are not read. A role
	// left out (or cacheContracts left out) is read from the live engines.
	// +optional
	CacheContracts *CacheContracts `json:"cacheContracts,omitempty"`

	// attentionBackend is MHA (also GQA/MQA) or MLA.
	// +kubebuilder:default=MHA
	// +optional
	AttentionBackend AttentionBackend `json:"attentionBackend,omitempty"`

	// mlaL15Cache is true when the prefill fleet runs the MLA L1.5 cache.
	// Only MLA models have it.
	// +optional
	MLAL15Cache bool `json:"mlaL15Cache,omitempty"`

	// tokensPerPage is the number of tokens in one KV page. Pages are token-major.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	// +optional
	TokensPerPage *int32 `json:"tokensPerPage,omitempty"`

	// prefill is the prefill fleet's parallel layout.
	// +required
	Prefill FleetLayout `json:"prefill"`

	// decode is the decode fleet's parallel layout.
	// +required
	Decode FleetLayout `json:"decode"`

	// model describes the served model by its config.json; the operator
	// derives kvBuffers and stateBuffers from it (and the attention backend),
	// as the engine registers them for each role's TP. Give the model or
	// kvBuffers, not both.
	// +optional
	Model *ModelSpec `json:"model,omitempty"`

	// kvCacheDtype is the KV cache dtype of both fleets (their
	// --kv-cache-dtype), with spec.model; a role's kvCacheDtype overrides it.
	// +optional
	KVCacheDtype KVCacheDtype `json:"kvCacheDtype,omitempty"`

	// kvBuffers are the KV buffer groups in the engine's pointer order; they
	// expand to buffer indices 0..N-1. Give them or spec.model (on the V1
	// wire).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	KVBuffers []KVBufferGroup `json:"kvBuffers,omitempty"`

	// stateBuffers are Mamba-style recurrent state buffer groups, a second
	// index space walked after the KV buffers.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	StateBuffers []StateBufferGroup `json:"stateBuffers,omitempty"` //nolint:kubeapilinter // arrayofstruct: the required count and decodeItemBytes come inline from BufferGeometry, which the rule does not follow
}

// FleetLayout is the tensor/data parallel layout of one role.
//
// +kubebuilder:validation:XValidation:rule="!has(self.dataParallelSize) || self.dataParallelSize < 1 || self.tensorParallelSize % self.dataParallelSize == 0",fieldPath=".dataParallelSize",message="dataParallelSize must divide tensorParallelSize"
type FleetLayout struct {
	// tensorParallelSize is the whole attention world of the role (--tp-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +required
	TensorParallelSize int32 `json:"tensorParallelSize"`

	// dataParallelSize is the number of DP attention groups; it divides
	// TensorParallelSize. For sglang it is the DP-attention size (--dp-size
	// with --enable-dp-attention); vllm runs no DP attention, so it stays 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	DataParallelSize *int32 `json:"dataParallelSize,omitempty"`

	// bootstrapAddress is the host:port of the role's bootstrap server, used
	// by agents; on wire CacheContract without cacheContracts.prefill the
	// operator reads the prefill's contract from it.
	// +kubebuilder:validation:MaxLength=260
	// +optional
	BootstrapAddress string `json:"bootstrapAddress,omitempty"`

	// kvCacheDtype overrides spec.kvCacheDtype for this role, with
	// spec.model (a fleet started with another --kv-cache-dtype). For vllm
	// and sglang it is the literal string the role's --kv-cache-dtype gets
	// (both engines compare the strings: auto against bfloat16 is a
	// mismatch); unset there, spec.kvCacheDtype, else auto.
	// +optional
	KVCacheDtype KVCacheDtype `json:"kvCacheDtype,omitempty"`

	// tokensPerPage is the role's page size for engines vllm (its
	// --block-size, required there) and sglang (its --page-size; unset,
	// spec.tokensPerPage). Not read for tokenspeed, whose roles share
	// spec.tokensPerPage.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	// +optional
	TokensPerPage *int32 `json:"tokensPerPage,omitempty"`

	// kvCacheLayout is the role's VLLM_KV_CACHE_LAYOUT, HND or NHD, for
	// engine vllm only; unset, HND (NixlConnector's default).
	// +optional
	KVCacheLayout KVCacheLayout `json:"kvCacheLayout,omitempty"`

	// pipelineParallelSize is the role's --pp-size, for engine sglang only;
	// unset, 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	PipelineParallelSize *int32 `json:"pipelineParallelSize,omitempty"`

	// engineVersion is the version of the engine build the role runs, as
	// the engine reports it (vLLM's vllm.__version__, e.g. 0.11.0 or
	// 0.11.1.dev5+g1a2b3c4; SGLang's sglang.__version__). Engine vllm
	// refuses a pair whose roles give different versions: NixlConnector
	// hashes its version into the handshake (EngineVersionMismatch); unset
	// on either role, the versions are not compared. For every engine it
	// tells a rollout's generations apart, and decode pods are counted by
	// it (annotation pd.pdtopo.dev/engine-version). docs/rollouts.md.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9][0-9A-Za-z.+_-]*$`
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
}

// EngineVersionMaxLength and EngineVersionPattern are FleetLayout.
// EngineVersion's bounds as the CRD states them (a test holds them to
// it), for the pd.pdtopo.dev/engine-version annotation read back from pods.
const (
	EngineVersionMaxLength = 64
	EngineVersionPattern   = `^[0-9][0-9A-Za-z.+_-]*$`
)

var engineVersionRE = regexp.MustCompile(EngineVersionPattern)

// ValidEngineVersion reports whether s is an engineVersion the API server
// takes.
func ValidEngineVersion(s string) bool {
	return len(s) <= EngineVersionMaxLength && engineVersionRE.MatchString(s)
}

// DataParallel is DataParallelSize, or its default 1 when unset (a spec
// read from a file, not through the API server, has no defaults applied).
func (f FleetLayout) DataParallel() int32 {
	if f.DataParallelSize == nil {
		return 1
	}
	return *f.DataParallelSize
}

// BufferGeometry is the per-page geometry shared by every buffer of a group.
type BufferGeometry struct {
	// count is the number of buffers in the group (one per layer).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +required
	Count int32 `json:"count"`

	// decodeItemBytes is the size of one page of one buffer on one decode rank.
	// +kubebuilder:validation:Minimum=1
	// +required
	DecodeItemBytes int64 `json:"decodeItemBytes"`

	// prefillItemBytes is the size of one page on one prefill rank. Defaults to
	// decodeItemBytes * decodeTP / prefillTP (per-DP TP sizes, integer division).
	// +kubebuilder:validation:Minimum=1
	// +optional
	PrefillItemBytes *int64 `json:"prefillItemBytes,omitempty"`

	// decodeUnitBytes is the size of the smallest movable piece on decode
	// (one KV head of one token, one state channel). Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	DecodeUnitBytes *int64 `json:"decodeUnitBytes,omitempty"`

	// prefillUnitBytes is the same on prefill. Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	PrefillUnitBytes *int64 `json:"prefillUnitBytes,omitempty"`
}

// KVBufferGroup is a run of KV buffers of one kind.
type KVBufferGroup struct {
	// kind is TargetK, TargetV, DraftK or DraftV.
	// +required
	Kind KVBufferKind `json:"kind"`

	BufferGeometry `json:",inline"`
}

// StateBufferGroup is a run of recurrent state buffers.
type StateBufferGroup struct {
	BufferGeometry `json:",inline"`
}
