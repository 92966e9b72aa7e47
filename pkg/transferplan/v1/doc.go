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

// Package v1 plans a prefill/decode pair on the engine's v1 wire (the
// first, fragment wire of tokenspeed): from a Layout of buffer item
// and unit sizes on both sides, which prefill ranks every decode rank pulls
// KV cache and recurrent state from and which byte ranges of each page
// come from where.
//
// It gives the answers of the reference engine (tokenspeed's
// transfer_plan.py and the route planning of its Mooncake receiver)
// wherever the reference is right, and fixes its known faults: non-divisible
// MLA ratios never name a rank that does not exist, prefill ranks that
// nobody pulls from are reported so that decode TP rank 0 can release them,
// fan-out is computed once per layout, and pages of several tokens are
// planned token-major (one fragment per token row where a decode rank takes
// part of each row), where the reference plans them as head-major and moves
// the wrong bytes. A refusal is a *transferplan.LayoutError whose fix is
// worked out from the layout.
//
// Importers name it planv1; it never imports pkg/transferplan/contract.
package v1
