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

package prefillpeer

import (
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

// ConfigFor returns the Config of the prefill side of a planner layout: its
// world and dp sizes, MLA L1.5 flag, and every rank's prefill item and unit
// lengths in buffer-index order — what a reference prefill of that layout
// would register. Scenario tests start the peer for the same layout they plan.
func ConfigFor(l planv1.Layout) Config {
	return Config{
		WorldSize:         l.Prefill.TPSize,
		DPSize:            l.Prefill.DPSize,
		EnableMLAL15Cache: l.MLAL15Cache,
		Buffers: kvv1.BufferLens{
			KVItemLens: itemLens(l.KVBuffers), KVUnitLens: unitLens(l.KVBuffers),
			StateItemLens: itemLens(l.StateBuffers), StateUnitLens: unitLens(l.StateBuffers),
		},
	}
}

func itemLens(bufs []planv1.BufferSpec) []int64 {
	out := make([]int64, len(bufs))
	for i, b := range bufs {
		out[i] = b.PrefillItemBytes
	}
	return out
}

func unitLens(bufs []planv1.BufferSpec) []int64 {
	out := make([]int64, len(bufs))
	for i, b := range bufs {
		out[i] = max(b.PrefillUnitBytes, 1)
	}
	return out
}
