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

import "k8s.io/apimachinery/pkg/runtime"

// KVCacheDtype is the element type of the engines' KV cache (their
// --kv-cache-dtype): the canonical names, then the engine's spellings (auto
// is what the engine resolves it to, bfloat16), then vLLM's and SGLang's
// own (fp8_inc, fp8_ds_mla, fp4_e2m1), which tokenspeed does not store.
// +kubebuilder:validation:Enum=bfloat16;float16;float8_e4m3fn;float8_e5m2;auto;bf16;fp16;half;fp8;fp8_e4m3;fp8_e5m2;fp8_inc;fp8_ds_mla;fp4_e2m1
type KVCacheDtype string

// ModelSpec describes the served model by its Hugging Face config.json; the
// operator derives the KV and state buffers from it, as the engine registers
// them for each role's TP (docs/model-aware-pairs.md).
//
// +kubebuilder:validation:XValidation:rule="has(self.hfConfig) != has(self.configMapKeyRef)",message="give the model's config.json inline (hfConfig) or in a ConfigMap (configMapKeyRef), exactly one of them"
type ModelSpec struct {
	// hfConfig is the model's config.json, inline as a JSON object. Only the
	// keys that size the cache are read (heads, head_dim, hidden_size,
	// layers, kv_lora_rank, qk_rope_head_dim, draft layers, a hybrid's
	// linear-attention keys, architectures); keeping the others is harmless.
	// At most 1 MiB.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MaxProperties=1024
	// +optional
	HFConfig *runtime.RawExtension `json:"hfConfig,omitempty"`

	// configMapKeyRef names a key of a ConfigMap in the PDPair's namespace
	// holding the model's config.json. The operator reads it when it plans
	// and again when the ConfigMap changes.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`

	// draftLayers is the number of layers of the MTP draft model the engines
	// run beside the target (speculative decoding), each adding DraftK and
	// DraftV buffers. Default: the config's mtp_num_hidden_layers or
	// num_nextn_predict_layers; 0 when the engines run without a draft model.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	// +optional
	DraftLayers *int32 `json:"draftLayers,omitempty"`
}

// ConfigMapKeyReference is a key of a ConfigMap in the PDPair's namespace
// (a model's config.json, a cache contract).
type ConfigMapKeyReference struct {
	// name is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// key is the key holding the document (config.json in data; a cache
	// contract in data or binaryData).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// DerivedBuffers is what the operator derived from spec.model: the buffers
// it plans with, in the form of an explicit PDPair's fields.
type DerivedBuffers struct {
	// model names the model and what sized its buffers (architecture,
	// layers, heads, head dimension, dtype, defaults applied).
	// +required
	Model string `json:"model"`
	// attentionBackend is MHA or MLA, from the config.
	// +required
	AttentionBackend AttentionBackend `json:"attentionBackend"`
	// configMapResourceVersion is the resourceVersion of the ConfigMap the
	// config was read from (configMapKeyRef).
	// +optional
	ConfigMapResourceVersion string `json:"configMapResourceVersion,omitempty"`
	// kvBuffers are the derived KV buffer groups, in pointer order.
	// +listType=atomic
	// +required
	KVBuffers []KVBufferGroup `json:"kvBuffers"`
	// stateBuffers are the derived state buffer groups (hybrid models).
	// +listType=atomic
	// +optional
	StateBuffers []StateBufferGroup `json:"stateBuffers,omitempty"` //nolint:kubeapilinter // arrayofstruct: the required count and decodeItemBytes come inline from BufferGeometry, which the rule does not follow
}
