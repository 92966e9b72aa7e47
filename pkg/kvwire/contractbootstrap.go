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

package kvwire

import (
	"encoding/json"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// Wire names the handshake a prefill instance speaks (pkg/transferplan's
// vocabulary), as its bootstrap server's parallel-info answer tells it.
// There is no version field: a contract-era server answers with
// cache_layout, a v1 server with item lengths.
type Wire = transferplan.Wire

const (
	// WireV1 is tokenspeed's fragment wire (docs/wire.md).
	WireV1 = transferplan.WireV1
	// WireCacheContract is tokenspeed's cache-contract wire.
	WireCacheContract = transferplan.WireCacheContract
)

// MaxContractParallelInfoBytes bounds a contract-era parallel-info body: the
// contract travels as a JSON string, in which escaping at most doubles it.
const MaxContractParallelInfoBytes = 2*plancontract.MaxBytes + 1024

// ContractParallelInfo is a contract-era bootstrap server's answer to GET
// /route?engine_rank=-1&target_dp_group=-1:
//
//	{"prefill_tp_size": N, "prefill_dp_size": M, "cache_layout": "<contract JSON>"}
type ContractParallelInfo struct {
	// PrefillTPSize is the whole prefill world, not per DP group.
	PrefillTPSize int
	PrefillDPSize int
	// CacheLayout is the prefill ranks' contract, the wire JSON the server
	// re-encoded from their registrations (ASCII).
	CacheLayout []byte
}

// TPPerDPGroup is the number of prefill TP ranks in one DP group, the TP
// size the engine plans a contract pair with.
func (p *ContractParallelInfo) TPPerDPGroup() int { return p.PrefillTPSize / p.PrefillDPSize }

// BootstrapAnswer is a parallel-info answer of either wire.
type BootstrapAnswer struct {
	Wire     Wire
	V1       ParallelInfo         // when Wire is WireV1
	Contract ContractParallelInfo // when Wire is WireCacheContract
}

// v1OnlyKeys are keys of a v1 answer that a contract answer never has.
var v1OnlyKeys = []string{"enable_mla_l1_5_cache", "kv_item_lens", "kv_unit_lens", "state_item_lens", "state_unit_lens"}

// DecodeBootstrapAnswer tells the wire from the answer and decodes it: an
// answer with the key cache_layout is a contract answer (even when its value
// is null: a contract server no rank has registered with yet, refused as
// MissingField), any other a v1 answer. The wire is reported with the error
// too, when the body is a JSON object.
func DecodeBootstrapAnswer(body []byte) (BootstrapAnswer, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return BootstrapAnswer{}, fieldError(KindBootstrapAnswer, "", ReasonMalformedJSON, "not a JSON object: %s", jsonDetail(err, body))
	}
	if _, ok := keys["cache_layout"]; ok {
		c, err := decodeContractParallelInfo(keys)
		return BootstrapAnswer{Wire: WireCacheContract, Contract: c}, err
	}
	v1, err := DecodeParallelInfo(body)
	return BootstrapAnswer{Wire: WireV1, V1: v1}, err
}

// DecodeContractParallelInfo decodes a contract-era parallel-info answer.
// Stricter than the engine (which int()s the sizes and reads only the keys
// it knows): sizes are JSON integers, the keys are exactly the three the
// server writes (v1 keys beside them are ReasonWireMismatch), and the
// contract is an ASCII string passing CheckContractEnvelope.
func DecodeContractParallelInfo(body []byte) (ContractParallelInfo, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return ContractParallelInfo{}, fieldError(KindContractParallelInfo, "", ReasonMalformedJSON, "not a JSON object: %s", jsonDetail(err, body))
	}
	return decodeContractParallelInfo(keys)
}

func decodeContractParallelInfo(keys map[string]json.RawMessage) (ContractParallelInfo, error) {
	const kind = KindContractParallelInfo
	for _, k := range v1OnlyKeys {
		if _, ok := keys[k]; ok {
			return ContractParallelInfo{}, fieldError(kind, k, ReasonWireMismatch, "a v1 key beside cache_layout: the answer mixes both wires")
		}
	}
	for k := range keys {
		if k != "prefill_tp_size" && k != "prefill_dp_size" && k != "cache_layout" {
			return ContractParallelInfo{}, fieldError(kind, k, ReasonUnknownField, "a contract answer has prefill_tp_size, prefill_dp_size and cache_layout only")
		}
	}
	if err := require(kind, keys, "prefill_tp_size", "prefill_dp_size", "cache_layout"); err != nil {
		return ContractParallelInfo{}, err
	}
	var p ContractParallelInfo
	if err := jsonInt(kind, "prefill_tp_size", keys, &p.PrefillTPSize); err != nil {
		return ContractParallelInfo{}, err
	}
	if err := jsonInt(kind, "prefill_dp_size", keys, &p.PrefillDPSize); err != nil {
		return ContractParallelInfo{}, err
	}
	var layout string
	if err := json.Unmarshal(keys["cache_layout"], &layout); err != nil {
		return ContractParallelInfo{}, fieldError(kind, "cache_layout", ReasonMalformedJSON, "not a string: %v", err)
	}
	p.CacheLayout = []byte(layout)
	return p, p.Validate()
}

func jsonInt(kind MessageKind, field string, keys map[string]json.RawMessage, dst *int) error {
	var v int64
	if err := json.Unmarshal(keys[field], &v); err != nil {
		return fieldError(kind, field, ReasonNotAnInteger, "%s is not a JSON integer", quote(keys[field]))
	}
	if v < 0 || v > 1<<31-1 {
		return fieldError(kind, field, ReasonOutOfRange, "%d is not a positive size", v)
	}
	*dst = int(v)
	return nil
}

// Validate checks the sizes and the contract's envelope.
func (p *ContractParallelInfo) Validate() error {
	const kind = KindContractParallelInfo
	if err := checkSizes(kind, "prefill_tp_size", "prefill_dp_size", p.PrefillTPSize, p.PrefillDPSize); err != nil {
		return err
	}
	if tp := p.TPPerDPGroup(); tp > plancontract.MaxTPSize {
		return fieldError(kind, "prefill_tp_size", ReasonOutOfRange, "%d TP ranks per DP group; a contract pair has at most %d", tp, plancontract.MaxTPSize)
	}
	return checkContractString(kind, p.CacheLayout)
}

func checkContractString(kind MessageKind, layout []byte) error {
	for i, c := range layout {
		if c >= 0x80 {
			return fieldError(kind, "cache_layout", ReasonNotASCII, "byte %d is 0x%02x; the engine reads the contract as ASCII", i, c)
		}
	}
	if err := CheckContractEnvelope(layout); err != nil {
		e := asError(err)
		e.Kind = kind
		return e
	}
	return nil
}

// MarshalPython encodes the answer as the engine's aiohttp server writes it.
// A zero size and a nil contract are written as null: the answer of a
// server no rank has registered with, which decoders refuse.
func (p *ContractParallelInfo) MarshalPython() []byte {
	o := pyjson.NewObject(64 + 2*len(p.CacheLayout))
	o.IntOrNull("prefill_tp_size", int64(p.PrefillTPSize))
	o.IntOrNull("prefill_dp_size", int64(p.PrefillDPSize))
	o.StrOrNull("cache_layout", p.CacheLayout)
	return o.Bytes()
}

// ContractRankRegistration is the body a contract-era prefill rank PUTs to
// /route: v1's first six keys and its contract, as an ASCII string.
type ContractRankRegistration struct {
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
func (g *ContractRankRegistration) MarshalPython() []byte {
	o := pyjson.NewObject(256 + 2*len(g.CacheLayout))
	o.Str("role", g.Role)
	o.Int("world_size", int64(g.WorldSize))
	o.Int("dp_size", int64(g.DPSize))
	o.Str("rank_ip", g.RankIP)
	o.Int("rank_port", int64(g.RankPort))
	o.Int("engine_rank", int64(g.EngineRank))
	o.StrOrNull("cache_layout", g.CacheLayout)
	return o.Bytes()
}

// DecodeContractRankRegistration parses a contract-era PUT /route body: the
// six v1 scalar keys (required, checked as for v1) and cache_layout, an
// ASCII string passing CheckContractEnvelope. Other keys are refused.
func DecodeContractRankRegistration(body []byte) (ContractRankRegistration, error) {
	const kind = KindContractRankRegistration
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return ContractRankRegistration{}, fieldError(kind, "", ReasonMalformedJSON, "not a JSON object: %s", jsonDetail(err, body))
	}
	for k := range keys {
		if !slices.Contains(contractRankRegistrationKeys, k) {
			return ContractRankRegistration{}, fieldError(kind, k, ReasonUnknownField, "a contract rank registration has %v only", contractRankRegistrationKeys)
		}
	}
	if err := require(kind, keys, contractRankRegistrationKeys...); err != nil {
		return ContractRankRegistration{}, err
	}
	var b struct {
		RankRegistration
		CacheLayout string `json:"cache_layout"`
	}
	if _, err := unmarshalObject(kind, body, &b); err != nil {
		return ContractRankRegistration{}, err
	}
	if err := b.RankRegistration.Validate(); err != nil {
		e := asError(err)
		e.Kind = kind
		return ContractRankRegistration{}, e
	}
	v := &b.RankRegistration
	g := ContractRankRegistration{Role: v.Role, WorldSize: v.WorldSize, DPSize: v.DPSize, RankIP: v.RankIP, RankPort: v.RankPort, EngineRank: v.EngineRank, CacheLayout: []byte(b.CacheLayout)}
	if err := checkContractString(kind, g.CacheLayout); err != nil {
		return ContractRankRegistration{}, err
	}
	return g, nil
}

var contractRankRegistrationKeys = []string{"role", "world_size", "dp_size", "rank_ip", "rank_port", "engine_rank", "cache_layout"}
