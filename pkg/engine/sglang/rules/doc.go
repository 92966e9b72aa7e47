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

// Package rules holds SGLang's prefill/decode disaggregation pair rules as
// pure functions: given a pair as SGLang sees it (the model's geometry, each
// role's --tp-size, DP-attention size, --pp-size, --page-size and literal
// --kv-cache-dtype, the --disaggregation-transfer-backend), Judge says
// whether SGLang's handshake, route lookups and prefill transfer would serve
// it and, if so, which prefill ranks each decode rank reads and which it
// only notifies; if not, which rule refuses it, with the numbers and the
// nearest layouts that work. Rank lists, for one fixed role, the other
// role's layouts SGLang serves, cheapest transfers first (for advise).
//
// The rules are SGLang's at the commits of conformance/sglang/reference.env
// (docs/engines/sglang.md is their table); each rule's comment names the
// file under python/sglang/srt/disaggregation/ and the function it comes
// from. The package is held to the engine's own answers,
// conformance/sglang/testdata/verdicts.json.
//
// SGLang never checks that the attention TP sizes divide: a decode TP above
// prefill's that is not a multiple fails some ranks' requests with a route
// 404, and a prefill TP above decode's that is not a multiple (6 → 4) is
// accepted and reads the wrong KV heads. Judge refuses both before traffic;
// the second refusal says it is stricter than the engine
// (Refusal.StricterThanEngine).
//
// Numbering: DecodeRank.DecodeTPRank is the decode engine's global TP rank
// (DP attention included: its attention rank is DecodeTPRank % attention
// TP), and Target.PrefillTPRank is the attention-TP rank inside the prefill
// DP group the request goes to; the mapping is the same in every group.
// It knows nothing of Kubernetes, HTTP or sockets.
package rules
