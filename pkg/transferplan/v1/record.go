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

import (
	"encoding/json"
	"strconv"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Record is the layout in the form published beside its plans.
func (l Layout) Record() transferplan.LayoutRecord {
	r := transferplan.LayoutRecord{
		AttentionBackend: l.Attention, MLAL15Cache: l.MLAL15Cache, TokensPerPage: l.TokensPerPage,
		Prefill: l.Prefill, Decode: l.Decode,
		KVBufferKinds: make([]transferplan.BufferKind, 0, len(l.KVBuffers)),
	}
	r.PrefillKVItemLens, r.PrefillKVUnitLens, r.DecodeKVItemLens, r.DecodeKVUnitLens = lens(l.KVBuffers)
	r.PrefillStateItemLens, r.PrefillStateUnitLens, r.DecodeStateItemLens, r.DecodeStateUnitLens = lens(l.StateBuffers)
	for _, b := range l.KVBuffers {
		r.KVBufferKinds = append(r.KVBufferKinds, b.Kind)
	}
	return r
}

func lens(bs []BufferSpec) (pi, pu, di, du []int64) {
	pi, pu, di, du = make([]int64, len(bs)), make([]int64, len(bs)), make([]int64, len(bs)), make([]int64, len(bs))
	for i, b := range bs {
		pi[i], pu[i], di[i], du[i] = b.PrefillItemBytes, b.PrefillUnitBytes, b.DecodeItemBytes, b.DecodeUnitBytes
	}
	return pi, pu, di, du
}

// FromRecord rebuilds the planner input from a v1 record (buffer fields are
// named after their index, as the record does not keep the spec's groups).
func FromRecord(r transferplan.LayoutRecord) Layout {
	l := Layout{
		Attention: r.AttentionBackend, MLAL15Cache: r.MLAL15Cache, TokensPerPage: r.TokensPerPage,
		Prefill: r.Prefill, Decode: r.Decode,
	}
	for i, k := range r.KVBufferKinds {
		l.KVBuffers = append(l.KVBuffers, BufferSpec{
			Kind: k, Field: "kvBuffer " + strconv.Itoa(i),
			PrefillItemBytes: at(r.PrefillKVItemLens, i), DecodeItemBytes: at(r.DecodeKVItemLens, i),
			PrefillUnitBytes: at(r.PrefillKVUnitLens, i), DecodeUnitBytes: at(r.DecodeKVUnitLens, i),
		})
	}
	for i := range r.DecodeStateItemLens {
		l.StateBuffers = append(l.StateBuffers, BufferSpec{
			Kind: transferplan.MambaState, Field: "stateBuffer " + strconv.Itoa(i),
			PrefillItemBytes: at(r.PrefillStateItemLens, i), DecodeItemBytes: at(r.DecodeStateItemLens, i),
			PrefillUnitBytes: at(r.PrefillStateUnitLens, i), DecodeUnitBytes: at(r.DecodeStateUnitLens, i),
		})
	}
	return l
}

func at(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

// Plan validates the layout and plans every decode TP rank.
func Plan(l Layout) (*transferplan.PlanSet, error) {
	p, err := NewPlanner(l)
	if err != nil {
		return nil, err
	}
	return &transferplan.PlanSet{Compatible: true, Layout: l.Record(), Plans: p.RoutePlans()}, nil
}

func init() { transferplan.RegisterWire(transferplan.WireV1, rules{}) }

// rules is the v1 wire's part of the shared vocabulary.
type rules struct{}

// MarshalRecord writes a v1 record as it always was: every layout key, and
// the wire and contract hashes only when set (they are not, for v1 pairs).
func (rules) MarshalRecord(r transferplan.LayoutRecord) ([]byte, error) {
	return json.Marshal(transferplan.RecordFields(r))
}

func (rules) NewPageCost(layout transferplan.LayoutRecord) transferplan.PageCost {
	return &pageCost{layout: layout}
}
