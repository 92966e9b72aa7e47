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

// Package vllm is vLLM's engine.Engine: it reads a PDPair with engine vllm
// (the model from spec.model, each role's tensorParallelSize,
// tokensPerPage as --block-size, kvCacheLayout and literal kvCacheDtype)
// into the pure rules of pkg/engine/vllm/rules and reports their verdict:
// a refusal as a *transferplan.LayoutError with the rule's reason and fix,
// a compatible pair as the prefill ranks each decode rank reads. vLLM's
// NixlConnector moves the bytes itself, so no agent is injected and no
// plans are published.
package vllm
