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

// Wire names the protocol a pair's decode and prefill ranks speak.
// +kubebuilder:validation:Enum=V1;CacheContract
type Wire string

const (
	// WireV1 is tokenspeed's first, fragment wire (docs/wire.md; the
	// reference commits: conformance/tokenspeed/reference.env).
	WireV1 Wire = "V1"
	// WireCacheContract is tokenspeed's later cache-contract wire
	// (docs/wire.md, docs/cache-contract.md).
	WireCacheContract Wire = "CacheContract"
)

// WireOrDefault is Wire, or V1 when unset (a spec read from a file, not
// through the API server, has no defaults applied).
func (s PDPairSpec) WireOrDefault() Wire {
	if s.Wire == "" {
		return WireV1
	}
	return s.Wire
}

// CacheContracts are the two roles' cache transfer contracts. A role left
// out is read from the live engines: the prefill's from its bootstrap
// server (spec.prefill.bootstrapAddress answers it for engine_rank=-1),
// the decode's from the contracts the decode engines registered with their
// agents; status.contracts says which source each verdict used, and when.
//
// +kubebuilder:validation:XValidation:rule="has(self.prefill) || has(self.decode)",message="give cacheContracts.prefill, cacheContracts.decode or both; leave cacheContracts out to read both contracts from the live engines"
type CacheContracts struct {
	// prefill is the prefill ranks' contract (what their bootstrap server
	// serves as cache_layout); left out, it is read from that server.
	// +optional
	Prefill *CacheContractSource `json:"prefill,omitempty"`

	// decode is the decode ranks' contract (what they send in their
	// registration); left out, it is read from the decode agents, which
	// hold what their engines registered.
	// +optional
	Decode *CacheContractSource `json:"decode,omitempty"`
}

// ContractSource is where a role's contract comes from.
// +kubebuilder:validation:Enum=Spec;PrefillBootstrap;AgentRegistration
type ContractSource string

const (
	// ContractSourceSpec: spec.cacheContracts, inline or in a ConfigMap.
	ContractSourceSpec ContractSource = "Spec"
	// ContractSourcePrefillBootstrap: the prefill's bootstrap server
	// (spec.prefill.bootstrapAddress).
	ContractSourcePrefillBootstrap ContractSource = "PrefillBootstrap"
	// ContractSourceAgentRegistration: what the decode engines registered
	// with their agents (the agents' probe addresses).
	ContractSourceAgentRegistration ContractSource = "AgentRegistration"
)

// CacheContractSource is where a contract's wire JSON is: inline, or in a
// key of a ConfigMap in the PDPair's namespace.
//
// +kubebuilder:validation:XValidation:rule="has(self.inline) != has(self.configMapKeyRef)",message="give exactly one of inline and configMapKeyRef"
type CacheContractSource struct {
	// inline is the contract's wire JSON, as the engine writes it
	// (CacheTransferContract.to_wire_bytes()); at most 256 KiB.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Inline string `json:"inline,omitempty"`

	// configMapKeyRef names a ConfigMap key holding the contract's wire
	// JSON (in data or binaryData). The operator follows the ConfigMap:
	// a change re-plans the pair.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`
}
