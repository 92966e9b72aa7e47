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

package engine

import pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"

// SelfTransferring is embedded by engines that move the KV cache
// themselves (vLLM's NixlConnector, SGLang's transfer backends): pdtopo
// injects no agent into their decode pods and judges their pairs from the
// spec and the model alone, reading no contracts.
type SelfTransferring struct{}

// InjectsAgent is false: the engine's own connector moves the KV cache.
func (SelfTransferring) InjectsAgent() bool { return false }

// ReadsContracts is false: the verdict is made from the spec and the model.
func (SelfTransferring) ReadsContracts(pdv1.PDPairSpec) bool { return false }

// ReadContracts reads nothing.
func (SelfTransferring) ReadContracts(pdv1.PDPairSpec, ContractReader) (Contracts, error) {
	return nil, nil
}
