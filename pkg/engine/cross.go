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

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// CrossComposer is an engine that can plan a cross-generation pair of a
// rollout (one generation's prefill layout meeting another's decode
// layout) from the layouts two published plan sets were made for, when
// the pair gives its buffers' sizes (kvBuffers) for its current layouts
// only: the prefill side from the set made for the cross pair's prefill
// layout, the decode side from the set made for its decode layout. An
// engine without it leaves such pairs unplanned.
type CrossComposer interface {
	// ComposeCross is the cross pair as a Pair, ready to be sized and
	// mapped, or a *transferplan.LayoutError naming what differs when the
	// two sets were made for more than other layouts. The Pair's Derived
	// is nil and its Explicit the zero spec: it has no spec of its own.
	ComposeCross(prefillSide, decodeSide transferplan.LayoutRecord) (Pair, error)
}
