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

// EngineName names the serving engine both roles of a pair run, whose
// rules judge the pair.
// +kubebuilder:validation:Enum=tokenspeed;vllm;sglang
type EngineName string

const (
	// EngineTokenspeed is tokenspeed, speaking spec.wire; a pair without
	// spec.engine runs it.
	EngineTokenspeed EngineName = "tokenspeed"
	// EngineVLLM is vLLM with its NIXL connector (docs/engines/vllm.md).
	EngineVLLM EngineName = "vllm"
	// EngineSGLang is SGLang's prefill/decode disaggregation
	// (docs/engines/sglang.md).
	EngineSGLang EngineName = "sglang"
)

// KVConnector is how the engine moves the KV cache: vLLM's
// --kv-transfer-config kv_connector, SGLang's
// --disaggregation-transfer-backend.
// +kubebuilder:validation:Enum=NixlConnector;mooncake;nixl
type KVConnector string

const (
	// KVConnectorNixl is vLLM's NixlConnector, the decode side reading
	// from the prefill side; vLLM's default here.
	KVConnectorNixl KVConnector = "NixlConnector"
	// KVConnectorMooncake is SGLang's mooncake transfer backend, its default.
	KVConnectorMooncake KVConnector = "mooncake"
	// KVConnectorSGLangNixl is SGLang's nixl transfer backend.
	KVConnectorSGLangNixl KVConnector = "nixl"
)

// KVCacheLayout is vLLM's VLLM_KV_CACHE_LAYOUT on a role.
// +kubebuilder:validation:Enum=HND;NHD
type KVCacheLayout string

const (
	// KVCacheLayoutHND puts heads outside tokens in a block (vLLM's LBHNC),
	// NixlConnector's default on non-MLA models.
	KVCacheLayoutHND KVCacheLayout = "HND"
	// KVCacheLayoutNHD puts tokens outside heads (vLLM's LBNHC).
	KVCacheLayoutNHD KVCacheLayout = "NHD"
)

// EngineSpec names the engine of both roles and its KV connector.
//
// +kubebuilder:validation:XValidation:rule="self.name != 'tokenspeed' || !has(self.kvConnector)",fieldPath=".kvConnector",reason=FieldValueForbidden,message="engine.kvConnector is not read for engine tokenspeed: its protocol is spec.wire; remove kvConnector"
// +kubebuilder:validation:XValidation:rule="self.name != 'vllm' || !has(self.kvConnector) || self.kvConnector == 'NixlConnector'",fieldPath=".kvConnector",reason=FieldValueInvalid,message="engine.kvConnector for engine vllm is NixlConnector (its --kv-transfer-config kv_connector), the only connector pdtopo judges"
// +kubebuilder:validation:XValidation:rule="self.name != 'sglang' || !has(self.kvConnector) || self.kvConnector in ['mooncake', 'nixl']",fieldPath=".kvConnector",reason=FieldValueInvalid,message="engine.kvConnector for engine sglang is mooncake or nixl (its --disaggregation-transfer-backend)"
type EngineSpec struct {
	// name is the engine both roles run: tokenspeed, vllm or sglang.
	// +required
	Name EngineName `json:"name"`

	// kvConnector is how the engine moves KV cache: for vllm NixlConnector
	// (the default), for sglang its --disaggregation-transfer-backend,
	// mooncake (the default) or nixl. Not read for tokenspeed.
	// +optional
	KVConnector KVConnector `json:"kvConnector,omitempty"`
}

// EngineOrDefault is the engine's name, or tokenspeed when spec.engine is
// absent.
func (s PDPairSpec) EngineOrDefault() EngineName {
	if s.Engine == nil || s.Engine.Name == "" {
		return EngineTokenspeed
	}
	return s.Engine.Name
}

// KVConnectorOrDefault is spec.engine.kvConnector, or the engine's default
// (NixlConnector for vllm, mooncake for sglang, none for tokenspeed).
func (s PDPairSpec) KVConnectorOrDefault() KVConnector {
	if s.Engine != nil && s.Engine.KVConnector != "" {
		return s.Engine.KVConnector
	}
	switch s.EngineOrDefault() {
	case EngineVLLM:
		return KVConnectorNixl
	case EngineSGLang:
		return KVConnectorMooncake
	}
	return ""
}

// RoleKVCacheDtype is the literal --kv-cache-dtype a role runs with: the
// role's kvCacheDtype, else spec.kvCacheDtype, else "auto" (the engines'
// default; tokenspeed pairs with spec.model always give one).
func (s PDPairSpec) RoleKVCacheDtype(role FleetLayout) string {
	switch {
	case role.KVCacheDtype != "":
		return string(role.KVCacheDtype)
	case s.KVCacheDtype != "":
		return string(s.KVCacheDtype)
	}
	return "auto"
}

// RoleTokensPerPage is the page size a role runs with: the role's
// tokensPerPage, else spec.tokensPerPage, else 1.
func (s PDPairSpec) RoleTokensPerPage(role FleetLayout) int32 {
	switch {
	case role.TokensPerPage != nil:
		return *role.TokensPerPage
	case s.TokensPerPage != nil:
		return *s.TokensPerPage
	}
	return 1
}

// PipelineParallel is PipelineParallelSize, or 1 when unset.
func (f FleetLayout) PipelineParallel() int32 {
	if f.PipelineParallelSize == nil {
		return 1
	}
	return *f.PipelineParallelSize
}
