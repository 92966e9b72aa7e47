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

package v1alpha1_test

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/pdtopo/pdtopo/api/v1alpha1"
)

// The per-role values the adapters read: the role's, else the pair's, else
// the engine's default.
func TestRoleDefaults(t *testing.T) {
	s := v1alpha1.PDPairSpec{}
	if s.EngineOrDefault() != v1alpha1.EngineTokenspeed || s.KVConnectorOrDefault() != "" || s.RoleKVCacheDtype(s.Prefill) != "auto" || s.RoleTokensPerPage(s.Prefill) != 1 || s.Prefill.PipelineParallel() != 1 {
		t.Fatalf("empty spec: engine %q connector %q dtype %q page %d pp %d", s.EngineOrDefault(), s.KVConnectorOrDefault(), s.RoleKVCacheDtype(s.Prefill), s.RoleTokensPerPage(s.Prefill), s.Prefill.PipelineParallel())
	}
	s.Engine = &v1alpha1.EngineSpec{Name: v1alpha1.EngineSGLang}
	s.KVCacheDtype, s.TokensPerPage = "bfloat16", ptr.To[int32](8)
	s.Decode.KVCacheDtype, s.Decode.TokensPerPage = "fp8_e4m3", ptr.To[int32](64)
	if s.KVConnectorOrDefault() != v1alpha1.KVConnectorMooncake || s.RoleKVCacheDtype(s.Prefill) != "bfloat16" || s.RoleKVCacheDtype(s.Decode) != "fp8_e4m3" ||
		s.RoleTokensPerPage(s.Prefill) != 8 || s.RoleTokensPerPage(s.Decode) != 64 {
		t.Fatalf("sglang spec: connector %q dtypes %q %q pages %d %d", s.KVConnectorOrDefault(), s.RoleKVCacheDtype(s.Prefill), s.RoleKVCacheDtype(s.Decode), s.RoleTokensPerPage(s.Prefill), s.RoleTokensPerPage(s.Decode))
	}
	s.Engine = &v1alpha1.EngineSpec{Name: v1alpha1.EngineVLLM}
	if s.KVConnectorOrDefault() != v1alpha1.KVConnectorNixl {
		t.Fatalf("vllm connector %q", s.KVConnectorOrDefault())
	}
}
