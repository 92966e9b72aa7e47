package prefillpeer

import (
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// ConfigFor returns the Config of the prefill side of a planner layout: its
// world and dp sizes, MLA L1.5 flag, and every rank's prefill item and unit
// lengths in buffer-index order — what a reference prefill of that layout
// would register. Scenario tests start the peer for the same layout they plan.
func ConfigFor(l transferplan.Layout) Config {
	return Config{
		WorldSize:         l.Prefill.TPSize,
		DPSize:            l.Prefill.DPSize,
		EnableMLAL15Cache: l.MLAL15Cache,
		Buffers: kvwire.BufferLens{
			KVItemLens: itemLens(l.KVBuffers), KVUnitLens: unitLens(l.KVBuffers),
			StateItemLens: itemLens(l.StateBuffers), StateUnitLens: unitLens(l.StateBuffers),
		},
	}
}

func itemLens(bufs []transferplan.BufferSpec) []int64 {
	out := make([]int64, len(bufs))
	for i, b := range bufs {
		out[i] = b.PrefillItemBytes
	}
	return out
}

func unitLens(bufs []transferplan.BufferSpec) []int64 {
	out := make([]int64, len(bufs))
	for i, b := range bufs {
		out[i] = max(b.PrefillUnitBytes, 1)
	}
	return out
}
