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

package v1

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// BufferLayout is the logical layout of one buffer on one side: the buffer is
// LogicalSize units along Axis; each rank's page item is ItemStrideBytes long.
// On a sharded axis, ranks come in replica groups of ReplicaGroup consecutive
// ranks holding the same shard (GQA with more prefill ranks than KV heads).
type BufferLayout struct {
	Index           int
	Kind            transferplan.BufferKind
	Axis            Axis
	LogicalSize     int64
	UnitBytes       int64
	ItemStrideBytes int64
	ReplicaGroup    int
}

// bufferPair is one buffer as both sides see it.
type bufferPair struct {
	spec    BufferSpec
	prefill BufferLayout
	decode  BufferLayout
	// rows is how many token rows each fragment of the buffer is cut into
	// (1: whole rows on both sides, one fragment per slice; see assignRows).
	rows int64
}

// buildBufferPair classifies one buffer (the reference's
// _build_buffer_layout_pair): sharded when both sides hold the same global
// number of units, replicated when both items are equal, a GQA replica layout
// when the prefill has more ranks than distinct KV heads; otherwise rejected.
// P and D are the per-DP TP sizes.
func buildBufferPair(index int, b BufferSpec, P, D int) (bufferPair, error) {
	pi, di, pu, du := b.PrefillItemBytes, b.DecodeItemBytes, b.PrefillUnitBytes, b.DecodeUnitBytes
	if pu != du {
		return bufferPair{}, bufferErrorf(transferplan.ReasonUnitSizeMismatch, b, index,
			"prefill unit is %d bytes, decode unit %d bytes; units must match", pu, du).WithFix(unitFix(pu, du))
	}
	if pi%pu != 0 {
		return bufferPair{}, bufferErrorf(transferplan.ReasonItemNotUnitAligned, b, index,
			"prefill item %d bytes is not a multiple of the %d-byte unit", pi, pu).WithFix(alignFix("prefillItemBytes", pi, pu))
	}
	if di%du != 0 {
		return bufferPair{}, bufferErrorf(transferplan.ReasonItemNotUnitAligned, b, index,
			"decode item %d bytes is not a multiple of the %d-byte unit", di, du).WithFix(alignFix("decodeItemBytes", di, du))
	}
	pl, dl := pi/pu, di/du
	pg, dg := pl*int64(P), dl*int64(D)
	axis := shardedAxis(b.Kind)
	pair := bufferPair{
		spec:    b,
		prefill: BufferLayout{Index: index, Kind: b.Kind, Axis: axis, UnitBytes: du, ItemStrideBytes: pi, ReplicaGroup: 1},
		decode:  BufferLayout{Index: index, Kind: b.Kind, Axis: axis, UnitBytes: du, ItemStrideBytes: di, ReplicaGroup: 1},
	}
	switch {
	case pg == dg:
		pair.prefill.LogicalSize, pair.decode.LogicalSize = dg, dg
	case pi == di:
		pair.prefill.Axis, pair.decode.Axis = AxisReplicated, AxisReplicated
		pair.prefill.LogicalSize, pair.decode.LogicalSize = dl, dl
	case axis == AxisKVHead && dg%pl == 0 && dg/pl <= int64(P) && int64(P)%(dg/pl) == 0:
		distinct := dg / pl
		pair.prefill.LogicalSize, pair.decode.LogicalSize = dg, dg
		pair.prefill.ReplicaGroup = int(int64(P) / distinct)
	default:
		return bufferPair{}, bufferErrorf(transferplan.ReasonUnsupportedHeterogeneousTP, b, index,
			"prefill holds %d units × %d ranks = %d, decode %d units × %d ranks = %d "+
				"(%d-byte units); the buffer is neither evenly sharded, replicated, nor a KV-head replica layout",
			pl, P, pg, dl, D, dg, du)
	}
	return pair, nil
}

// checkAlignment is the reference planner's per-side alignment check: the
// ranks holding distinct shards split the logical size evenly and each item
// holds its shard. Layouts built by buildBufferPair always pass; the check
// guards the invariants the interval arithmetic relies on.
func checkAlignment(b BufferSpec, layout BufferLayout, tp int, role string) error {
	if layout.Axis == AxisReplicated {
		return nil
	}
	if tp%layout.ReplicaGroup != 0 {
		return bufferErrorf(transferplan.ReasonShardNotAligned, b, layout.Index,
			"%s replica group of %d ranks does not divide TP %d", role, layout.ReplicaGroup, tp)
	}
	eff := int64(tp / layout.ReplicaGroup)
	if layout.LogicalSize%eff != 0 {
		return bufferErrorf(transferplan.ReasonShardNotAligned, b, layout.Index,
			"%d units do not split evenly over %d distinct %s shards", layout.LogicalSize, eff, role)
	}
	if itemUnits, need := layout.ItemStrideBytes/layout.UnitBytes, layout.LogicalSize/eff; itemUnits < need {
		return bufferErrorf(transferplan.ReasonItemSmallerThanShard, b, layout.Index,
			"%s item holds %d units but its shard is %d units", role, itemUnits, need)
	}
	return nil
}

// shardLen is the number of units each distinct shard of l holds on a side of tp ranks.
func (l BufferLayout) shardLen(tp int) int64 {
	return l.LogicalSize / int64(tp/l.ReplicaGroup)
}

// Axis is how a buffer's units are spread over the ranks of one role.
type Axis string

const (
	// AxisKVHead: KV heads sharded over TP ranks (possibly in replica groups).
	AxisKVHead Axis = "kv_head"
	// AxisStateChannel: recurrent state channels sharded over TP ranks.
	AxisStateChannel Axis = "state_channel"
	// AxisReplicated: every rank holds the whole buffer.
	AxisReplicated Axis = "replicated"
)

// shardedAxis is the axis a buffer of kind k is sharded on.
func shardedAxis(k transferplan.BufferKind) Axis {
	if k == transferplan.MambaState {
		return AxisStateChannel
	}
	return AxisKVHead
}
