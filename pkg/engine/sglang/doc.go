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

// Package sglang is SGLang's engine.Engine: it reads a PDPair with engine
// sglang (the model from spec.model, each role's tensorParallelSize,
// dataParallelSize as the DP-attention size, pipelineParallelSize,
// tokensPerPage as --page-size and literal kvCacheDtype, and
// engine.kvConnector as --disaggregation-transfer-backend) into the pure
// rules of pkg/engine/sglang/rules and reports their verdict: a refusal as
// a *transferplan.LayoutError with the rule's reason and fix, a compatible
// pair as each decode rank's targets (decodeTPRank the engine's global
// rank, prefillTPRank the attention-TP rank inside the prefill DP group).
// SGLang's transfer backend moves the bytes itself, so no agent is
// injected and no plans are published.
package sglang
