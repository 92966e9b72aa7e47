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

// Package rules holds vLLM's NixlConnector pair rules as pure functions: given
// a prefill/decode pair as vLLM sees it (the model's geometry, each role's
// --tensor-parallel-size, --block-size, VLLM_KV_CACHE_LAYOUT and literal
// --kv-cache-dtype), Judge says whether the engine's decode-side handshake
// would accept it and, if so, which prefill ranks each decode rank reads; if
// not, which of the engine's rules refuses it, with the numbers and the
// nearest layouts that would work. Rank lists, for one fixed role, the other
// role's layouts the engine accepts, cheapest transfers first (for advise).
//
// The rules are vLLM's, read at the commits of conformance/vllm/reference.env
// (docs/engines/vllm.md is their table); each rule's comment names the vLLM
// file and function it comes from, relative to
// vllm/backends/distributed/kv_transfer/kv_connector/. The package is held
// to the engine's own answers, conformance/vllm/testdata/verdicts.json.
//
// Where vLLM accepts a pair it cannot serve (an NHD decode block gathered
// from several prefill ranks of a hybrid Mamba model, which cuts token
// ranges where it means heads), Judge refuses it and the refusal says it is
// stricter than the engine (Refusal.StricterThanEngine). It knows nothing
// of Kubernetes, the wire or sockets.
package rules
