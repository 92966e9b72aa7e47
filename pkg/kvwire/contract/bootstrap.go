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

package contract

import (
	"github.com/pdtopo/pdtopo/pkg/pyjson"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"encoding/json"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// MaxParallelInfoBytes bounds a contract-era parallel-info body: the
// contract travels as a JSON string, in which escaping at most doubles it.
const MaxParallelInfoBytes = 2*plancontract.MaxBytes + 1024

// ParallelInfo is a contract-era bootstrap server's answer to GET
// /route?engine_rank=-1&target_dp_group=-1:
//
//	{"prefill_tp_size": N, "prefill_dp_size": M, "cache_layout": "<contract JSON>"}
type ParallelInfo struct {
	// PrefillTPSize is the whole prefill world, not per DP group.
	PrefillTPSize int
	PrefillDPSize int
	// CacheLayout is the prefill ranks' contract, the wire JSON the server
	// re-encoded from their registrations (ASCII).
	CacheLayout []byte
}

// TPPerDPGroup is the number of prefill TP ranks in one DP group, the TP
// size the engine plans a contract pair with.
func (p *ParallelInfo) TPPerDPGroup() int { return p.PrefillTPSize / p.PrefillDPSize }

// v1OnlyKeys are keys of a v1 answer that a contract answer never has.
var v1OnlyKeys = []string{"enable_mla_l1_5_cache", "kv_item_lens", "kv_unit_lens", "state_item_lens", "state_unit_lens"}

// DecodeParallelInfo decodes a contract-era parallel-info answer.
// Stricter than the engine (which int()s the sizes and reads only the keys
// it knows): sizes are JSON integers, the keys are exactly the three the
// server writes (v1 keys beside them are ReasonWireMismatch), and the
// contract is an ASCII string passing CheckEnvelope.
func DecodeParallelInfo(body []byte) (ParallelInfo, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return ParallelInfo{}, kvwire.FieldError(kvwire.KindContractParallelInfo, "", kvwire.ReasonMalformedJSON, "not a JSON object: %s", kvwire.JSONDetail(err, body))
	}
	return decodeParallelInfo(keys)
}

func decodeParallelInfo(keys map[string]json.RawMessage) (ParallelInfo, error) {
	const kind = kvwire.KindContractParallelInfo
	for _, k := range v1OnlyKeys {
		if _, ok := keys[k]; ok {
			return ParallelInfo{}, kvwire.FieldError(kind, k, kvwire.ReasonWireMismatch, "a v1 key beside cache_layout: the answer mixes both wires")
		}
	}
	for k := range keys {
		if k != "prefill_tp_size" && k != "prefill_dp_size" && k != "cache_layout" {
			return ParallelInfo{}, kvwire.FieldError(kind, k, kvwire.ReasonUnknownField, "a contract answer has prefill_tp_size, prefill_dp_size and cache_layout only")
		}
	}
	if err := kvwire.RequireKeys(kind, keys, "prefill_tp_size", "prefill_dp_size", "cache_layout"); err != nil {
		return ParallelInfo{}, err
	}
	var p ParallelInfo
	if err := jsonInt(kind, "prefill_tp_size", keys, &p.PrefillTPSize); err != nil {
		return ParallelInfo{}, err
	}
	if err := jsonInt(kind, "prefill_dp_size", keys, &p.PrefillDPSize); err != nil {
		return ParallelInfo{}, err
	}
	var layout string
	if err := json.Unmarshal(keys["cache_layout"], &layout); err != nil {
		return ParallelInfo{}, kvwire.FieldError(kind, "cache_layout", kvwire.ReasonMalformedJSON, "not a string: %v", err)
	}
	p.CacheLayout = []byte(layout)
	return p, p.Validate()
}

func jsonInt(kind kvwire.MessageKind, field string, keys map[string]json.RawMessage, dst *int) error {
	var v int64
	if err := json.Unmarshal(keys[field], &v); err != nil {
		return kvwire.FieldError(kind, field, kvwire.ReasonNotAnInteger, "%s is not a JSON integer", kvwire.Quote(keys[field]))
	}
	if v < 0 || v > 1<<31-1 {
		return kvwire.FieldError(kind, field, kvwire.ReasonOutOfRange, "%d is not a positive size", v)
	}
	*dst = int(v)
	return nil
}

// Validate checks the sizes and the contract's envelope.
func (p *ParallelInfo) Validate() error {
	const kind = kvwire.KindContractParallelInfo
	if err := kvwire.CheckSizes(kind, "prefill_tp_size", "prefill_dp_size", p.PrefillTPSize, p.PrefillDPSize); err != nil {
		return err
	}
	if tp := p.TPPerDPGroup(); tp > plancontract.MaxTPSize {
		return kvwire.FieldError(kind, "prefill_tp_size", kvwire.ReasonOutOfRange, "%d TP ranks per DP group; a contract pair has at most %d", tp, plancontract.MaxTPSize)
	}
	return checkLayoutString(kind, p.CacheLayout)
}

func checkLayoutString(kind kvwire.MessageKind, layout []byte) error {
	for i, c := range layout {
		if c >= 0x80 {
			return kvwire.FieldError(kind, "cache_layout", kvwire.ReasonNotASCII, "byte %d is 0x%02x; the engine reads the contract as ASCII", i, c)
		}
	}
	if err := CheckEnvelope(layout); err != nil {
		e := kvwire.AsError(err)
		e.Kind = kind
		return e
	}
	return nil
}

// MarshalPython encodes the answer as the engine's aiohttp server writes it.
// A zero size and a nil contract are written as null: the answer of a
// server no rank has registered with, which decoders refuse.
func (p *ParallelInfo) MarshalPython() []byte {
	o := pyjson.NewObject(64 + 2*len(p.CacheLayout))
	o.IntOrNull("prefill_tp_size", int64(p.PrefillTPSize))
	o.IntOrNull("prefill_dp_size", int64(p.PrefillDPSize))
	o.StrOrNull("cache_layout", p.CacheLayout)
	return o.Bytes()
}

// RankRegistration is the body a contract-era prefill rank PUTs to
// /route: v1's first six keys and its contract, as an ASCII string.
type RankRegistration struct {
	Role       string
	WorldSize  int
	DPSize     int
	RankIP     string
	RankPort   int
	EngineRank int
	// CacheLayout is the rank's contract, wire JSON.
	CacheLayout []byte
}

// MarshalPython encodes the body as the engine's requests.put(json=...)
// sends it.
func (g *RankRegistration) MarshalPython() []byte {
	o := pyjson.NewObject(256 + 2*len(g.CacheLayout))
	f := kvwire.RankFields{Role: g.Role, WorldSize: g.WorldSize, DPSize: g.DPSize, RankIP: g.RankIP, RankPort: g.RankPort, EngineRank: g.EngineRank}
	f.WritePython(o)
	o.StrOrNull("cache_layout", g.CacheLayout)
	return o.Bytes()
}

// DecodeRankRegistration parses a contract-era PUT /route body: the
// six v1 scalar keys (required, checked as for v1) and cache_layout, an
// ASCII string passing CheckEnvelope. Other keys are refused.
func DecodeRankRegistration(body []byte) (RankRegistration, error) {
	const kind = kvwire.KindContractRankRegistration
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return RankRegistration{}, kvwire.FieldError(kind, "", kvwire.ReasonMalformedJSON, "not a JSON object: %s", kvwire.JSONDetail(err, body))
	}
	for k := range keys {
		if !slices.Contains(rankRegistrationKeys, k) {
			return RankRegistration{}, kvwire.FieldError(kind, k, kvwire.ReasonUnknownField, "a contract rank registration has %v only", rankRegistrationKeys)
		}
	}
	if err := kvwire.RequireKeys(kind, keys, rankRegistrationKeys...); err != nil {
		return RankRegistration{}, err
	}
	var b struct {
		kvwire.RankFields
		CacheLayout string `json:"cache_layout"`
	}
	if _, err := kvwire.UnmarshalObject(kind, body, &b); err != nil {
		return RankRegistration{}, err
	}
	if err := b.RankFields.Validate(kind); err != nil {
		e := kvwire.AsError(err)
		e.Kind = kind
		return RankRegistration{}, e
	}
	v := &b.RankFields
	g := RankRegistration{Role: v.Role, WorldSize: v.WorldSize, DPSize: v.DPSize, RankIP: v.RankIP, RankPort: v.RankPort, EngineRank: v.EngineRank, CacheLayout: []byte(b.CacheLayout)}
	if err := checkLayoutString(kind, g.CacheLayout); err != nil {
		return RankRegistration{}, err
	}
	return g, nil
}

var rankRegistrationKeys = []string{"role", "world_size", "dp_size", "rank_ip", "rank_port", "engine_rank", "cache_layout"}
