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
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/pyjson"
)

// BufferLens are a prefill rank's per-buffer item and unit lengths, as the
// bootstrap server reports them. Any list may be empty (an older prefill, or
// a model without state buffers); unit lengths then default to 1 per item.
type BufferLens struct {
	KVItemLens    []int64 `json:"kv_item_lens"`
	KVUnitLens    []int64 `json:"kv_unit_lens"`
	StateItemLens []int64 `json:"state_item_lens"`
	StateUnitLens []int64 `json:"state_unit_lens"`
}

// RankRegistration is the body a prefill rank PUTs to /route: the keys
// both wires share (kvwire.RankFields), v1's MLA L1.5 flag and its buffer
// lengths.
type RankRegistration struct {
	Role      string `json:"role"`
	WorldSize int    `json:"world_size"`
	DPSize    int    `json:"dp_size"`
	RankIP    string `json:"rank_ip"`
	RankPort  int    `json:"rank_port"`
	// EngineRank is the rank in the whole prefill world; the server files it
	// under dp group EngineRank/(WorldSize/DPSize) and that group's TP rank
	// EngineRank%(WorldSize/DPSize).
	EngineRank        int  `json:"engine_rank"`
	EnableMLAL15Cache bool `json:"enable_mla_l1_5_cache"`
	BufferLens
}

func (g *RankRegistration) fields() kvwire.RankFields {
	return kvwire.RankFields{Role: g.Role, WorldSize: g.WorldSize, DPSize: g.DPSize, RankIP: g.RankIP, RankPort: g.RankPort, EngineRank: g.EngineRank}
}

// TPPerDPGroup is the number of TP ranks in one dp group.
func (g *RankRegistration) TPPerDPGroup() int { return g.WorldSize / g.DPSize }

// ParallelInfo is the answer to GET /route?engine_rank=-1&target_dp_group=-1.
type ParallelInfo struct {
	// PrefillTPSize is the whole prefill world (world_size), not per dp group.
	PrefillTPSize     int  `json:"prefill_tp_size"`
	PrefillDPSize     int  `json:"prefill_dp_size"`
	EnableMLAL15Cache bool `json:"enable_mla_l1_5_cache"`
	BufferLens
}

// MarshalPython encodes the body as the reference's requests.put(json=...)
// sends it.
func (g *RankRegistration) MarshalPython() []byte {
	o := pyjson.NewObject(256)
	f := g.fields()
	f.WritePython(o)
	o.Bool("enable_mla_l1_5_cache", g.EnableMLAL15Cache)
	g.BufferLens.write(o)
	return o.Bytes()
}

// MarshalPython encodes the body as the reference bootstrap server answers.
// A zero size is written as null: that is what the reference answers before
// any rank has registered, and what a decoder must refuse.
func (p *ParallelInfo) MarshalPython() []byte {
	o := pyjson.NewObject(256)
	o.IntOrNull("prefill_tp_size", int64(p.PrefillTPSize))
	o.IntOrNull("prefill_dp_size", int64(p.PrefillDPSize))
	o.Bool("enable_mla_l1_5_cache", p.EnableMLAL15Cache)
	p.BufferLens.write(o)
	return o.Bytes()
}

func (l *BufferLens) write(o *pyjson.Object) {
	o.Ints("kv_item_lens", l.KVItemLens)
	o.Ints("kv_unit_lens", l.KVUnitLens)
	o.Ints("state_item_lens", l.StateItemLens)
	o.Ints("state_unit_lens", l.StateUnitLens)
}

// DecodeRankRegistration parses a PUT /route body. Like the reference it
// requires every scalar key; the four lists may be absent, null or empty.
func DecodeRankRegistration(body []byte) (RankRegistration, error) {
	var g RankRegistration
	keys, err := kvwire.UnmarshalObject(kvwire.KindRankRegistration, body, &g)
	if err != nil {
		return RankRegistration{}, err
	}
	if err := kvwire.RequireKeys(kvwire.KindRankRegistration, keys, "role", "world_size", "dp_size", "rank_ip", "rank_port", "engine_rank", "enable_mla_l1_5_cache"); err != nil {
		return RankRegistration{}, err
	}
	if err := g.Validate(); err != nil {
		return RankRegistration{}, err
	}
	return g, nil
}

// Validate checks what the bootstrap server and the decode side rely on.
func (g *RankRegistration) Validate() error {
	const kind = kvwire.KindRankRegistration
	f := g.fields()
	if err := f.Validate(kind); err != nil {
		return err
	}
	return g.BufferLens.validate(kind)
}

// DecodeParallelInfo parses the parallel-info answer. Sizes must be present
// and positive (the reference answers null before any prefill rank has
// registered, and then crashes the decode side; this is MissingField).
func DecodeParallelInfo(body []byte) (ParallelInfo, error) {
	var p ParallelInfo
	keys, err := kvwire.UnmarshalObject(kvwire.KindParallelInfo, body, &p)
	if err != nil {
		return ParallelInfo{}, err
	}
	if err := kvwire.RequireKeys(kvwire.KindParallelInfo, keys, "prefill_tp_size", "prefill_dp_size", "enable_mla_l1_5_cache"); err != nil {
		return ParallelInfo{}, err
	}
	if err := p.Validate(); err != nil {
		return ParallelInfo{}, err
	}
	return p, nil
}

// Validate checks that the sizes describe a real layout and the lists agree.
func (p *ParallelInfo) Validate() error {
	if err := kvwire.CheckSizes(kvwire.KindParallelInfo, "prefill_tp_size", "prefill_dp_size", p.PrefillTPSize, p.PrefillDPSize); err != nil {
		return err
	}
	return p.BufferLens.validate(kvwire.KindParallelInfo)
}

// validate: lengths are positive; unit lengths, when given, pair one-to-one
// with item lengths (the reference indexes them by buffer).
func (l *BufferLens) validate(kind kvwire.MessageKind) error {
	lists := []struct {
		name string
		vs   []int64
	}{{"kv_item_lens", l.KVItemLens}, {"kv_unit_lens", l.KVUnitLens}, {"state_item_lens", l.StateItemLens}, {"state_unit_lens", l.StateUnitLens}}
	for _, list := range lists {
		for i, v := range list.vs {
			if v < 1 {
				return kvwire.FieldError(kind, list.name, kvwire.ReasonOutOfRange, "entry %d is %d; lengths are positive", i, v)
			}
		}
	}
	pairs := [][2]int{{0, 1}, {2, 3}}
	for _, p := range pairs {
		items, units := lists[p[0]], lists[p[1]]
		if len(items.vs) > 0 && len(units.vs) > 0 && len(items.vs) != len(units.vs) {
			return kvwire.FieldError(kind, units.name, kvwire.ReasonInvalidValue, "%d entries for %d %s", len(units.vs), len(items.vs), items.name)
		}
	}
	return nil
}
