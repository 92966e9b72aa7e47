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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

const (
	// RoutePath is the bootstrap server's registration and lookup endpoint.
	RoutePath = "/route"
	// HealthPath answers 200 "OK" while the prefill instance is up.
	HealthPath = "/health"
	// ParallelInfoQuery is the /route query that asks for the parallel info
	// rather than one rank's address.
	ParallelInfoQuery = "engine_rank=-1&target_dp_group=-1"
	// RolePrefill is the role of a prefill rank's registration.
	RolePrefill = "Prefill"
)

// RankAddressQuery is the /route query for prefill TP rank tpRank (within
// its dp group) of dp group dpGroup.
func RankAddressQuery(tpRank, dpGroup int) string {
	return "engine_rank=" + strconv.Itoa(tpRank) + "&target_dp_group=" + strconv.Itoa(dpGroup)
}

// BufferLens are a prefill rank's per-buffer item and unit lengths, as the
// bootstrap server reports them. Any list may be empty (an older prefill, or
// a model without state buffers); unit lengths then default to 1 per item.
type BufferLens struct {
	KVItemLens    []int64 `json:"kv_item_lens"`
	KVUnitLens    []int64 `json:"kv_unit_lens"`
	StateItemLens []int64 `json:"state_item_lens"`
	StateUnitLens []int64 `json:"state_unit_lens"`
}

// RankRegistration is the body a prefill rank PUTs to /route.
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

// RankAddress is the answer to GET /route for one rank: where its PULL
// socket listens.
type RankAddress struct {
	RankIP   string `json:"rank_ip"`
	RankPort int    `json:"rank_port"`
}

// Endpoint is the ZMQ endpoint a decode rank PUSHes to.
func (a RankAddress) Endpoint() string { return Endpoint(a.RankIP, a.RankPort) }

// Endpoint is the ZMQ TCP endpoint of host and port, tcp://host:port, the
// form every address of the handshake takes on a socket (an IPv6 literal is
// bracketed, as ZMQ requires).
func Endpoint(host string, port int) string {
	return "tcp://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// MarshalPython encodes the body as the reference's requests.put(json=...)
// sends it.
func (g *RankRegistration) MarshalPython() []byte {
	o := pyjson.NewObject(256)
	o.Str("role", g.Role)
	o.Int("world_size", int64(g.WorldSize))
	o.Int("dp_size", int64(g.DPSize))
	o.Str("rank_ip", g.RankIP)
	o.Int("rank_port", int64(g.RankPort))
	o.Int("engine_rank", int64(g.EngineRank))
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

// MarshalPython encodes the body as the reference bootstrap server answers.
func (a *RankAddress) MarshalPython() []byte {
	o := pyjson.NewObject(64)
	o.Str("rank_ip", a.RankIP)
	o.Int("rank_port", int64(a.RankPort))
	return o.Bytes()
}

func (l *BufferLens) write(o *pyjson.Object) {
	o.Ints("kv_item_lens", l.KVItemLens)
	o.Ints("kv_unit_lens", l.KVUnitLens)
	o.Ints("state_item_lens", l.StateItemLens)
	o.Ints("state_unit_lens", l.StateUnitLens)
}

// unmarshalObject decodes a JSON object body into v, with the key set
// checked separately: encoding/json would silently zero missing keys.
func unmarshalObject(kind MessageKind, body []byte, v any) (map[string]json.RawMessage, *Error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return nil, fieldError(kind, "", ReasonMalformedJSON, "not a JSON object: %s", jsonDetail(err, body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		field := ""
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			field = te.Field
		}
		return nil, fieldError(kind, field, ReasonMalformedJSON, "%v", err)
	}
	return keys, nil
}

func jsonDetail(err error, body []byte) string {
	if err != nil {
		return err.Error()
	}
	return quote(body)
}

// require reports the first of keys that is absent or null.
func require(kind MessageKind, present map[string]json.RawMessage, keys ...string) *Error {
	for _, k := range keys {
		if raw, ok := present[k]; !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return fieldError(kind, k, ReasonMissingField, "key %q is absent or null", k)
		}
	}
	return nil
}

// DecodeRankRegistration parses a PUT /route body. Like the reference it
// requires every scalar key; the four lists may be absent, null or empty.
func DecodeRankRegistration(body []byte) (RankRegistration, error) {
	var g RankRegistration
	keys, err := unmarshalObject(KindRankRegistration, body, &g)
	if err != nil {
		return RankRegistration{}, err
	}
	if err := require(KindRankRegistration, keys, "role", "world_size", "dp_size", "rank_ip", "rank_port", "engine_rank", "enable_mla_l1_5_cache"); err != nil {
		return RankRegistration{}, err
	}
	if err := g.Validate(); err != nil {
		return RankRegistration{}, err
	}
	return g, nil
}

// Validate checks what the bootstrap server and the decode side rely on.
func (g *RankRegistration) Validate() error {
	const kind = KindRankRegistration
	if g.Role == "" {
		return fieldError(kind, "role", ReasonInvalidValue, "empty")
	}
	if err := checkSizes(kind, "world_size", "dp_size", g.WorldSize, g.DPSize); err != nil {
		return err
	}
	if g.EngineRank < 0 || g.EngineRank >= g.WorldSize {
		return fieldError(kind, "engine_rank", ReasonOutOfRange, "%d is outside [0, %d)", g.EngineRank, g.WorldSize)
	}
	if err := checkText(kind, -1, "rank_ip", g.RankIP); err != nil {
		return err
	}
	if err := checkPort(kind, -1, "rank_port", g.RankPort); err != nil {
		return err
	}
	return g.BufferLens.validate(kind)
}

// DecodeParallelInfo parses the parallel-info answer. Sizes must be present
// and positive (the reference answers null before any prefill rank has
// registered, and then crashes the decode side; this is MissingField).
func DecodeParallelInfo(body []byte) (ParallelInfo, error) {
	var p ParallelInfo
	keys, err := unmarshalObject(KindParallelInfo, body, &p)
	if err != nil {
		return ParallelInfo{}, err
	}
	if err := require(KindParallelInfo, keys, "prefill_tp_size", "prefill_dp_size", "enable_mla_l1_5_cache"); err != nil {
		return ParallelInfo{}, err
	}
	if err := p.Validate(); err != nil {
		return ParallelInfo{}, err
	}
	return p, nil
}

// Validate checks that the sizes describe a real layout and the lists agree.
func (p *ParallelInfo) Validate() error {
	if err := checkSizes(KindParallelInfo, "prefill_tp_size", "prefill_dp_size", p.PrefillTPSize, p.PrefillDPSize); err != nil {
		return err
	}
	return p.BufferLens.validate(KindParallelInfo)
}

// DecodeRankAddress parses one rank's address.
func DecodeRankAddress(body []byte) (RankAddress, error) {
	var a RankAddress
	keys, err := unmarshalObject(KindRankAddress, body, &a)
	if err != nil {
		return RankAddress{}, err
	}
	if err := require(KindRankAddress, keys, "rank_ip", "rank_port"); err != nil {
		return RankAddress{}, err
	}
	if err := checkText(KindRankAddress, -1, "rank_ip", a.RankIP); err != nil {
		return RankAddress{}, err
	}
	if err := checkPort(KindRankAddress, -1, "rank_port", a.RankPort); err != nil {
		return RankAddress{}, err
	}
	return a, nil
}

func checkSizes(kind MessageKind, tpField, dpField string, tp, dp int) error {
	if tp < 1 || tp > math.MaxInt32 {
		return fieldError(kind, tpField, ReasonOutOfRange, "%d is not a positive size", tp)
	}
	if dp < 1 || dp > tp {
		return fieldError(kind, dpField, ReasonOutOfRange, "%d is outside [1, %s=%d]", dp, tpField, tp)
	}
	if !(transferplan.Parallelism{TPSize: tp, DPSize: dp}).DPDividesTP() {
		return fieldError(kind, dpField, ReasonInvalidValue, "%d does not divide %s=%d", dp, tpField, tp)
	}
	return nil
}

// validate: lengths are positive; unit lengths, when given, pair one-to-one
// with item lengths (the reference indexes them by buffer).
func (l *BufferLens) validate(kind MessageKind) error {
	lists := []struct {
		name string
		vs   []int64
	}{{"kv_item_lens", l.KVItemLens}, {"kv_unit_lens", l.KVUnitLens}, {"state_item_lens", l.StateItemLens}, {"state_unit_lens", l.StateUnitLens}}
	for _, list := range lists {
		for i, v := range list.vs {
			if v < 1 {
				return fieldError(kind, list.name, ReasonOutOfRange, "entry %d is %d; lengths are positive", i, v)
			}
		}
	}
	pairs := [][2]int{{0, 1}, {2, 3}}
	for _, p := range pairs {
		items, units := lists[p[0]], lists[p[1]]
		if len(items.vs) > 0 && len(units.vs) > 0 && len(items.vs) != len(units.vs) {
			return fieldError(kind, units.name, ReasonInvalidValue, "%d entries for %d %s", len(units.vs), len(items.vs), items.name)
		}
	}
	return nil
}

// CheckBootstrapAddress accepts HOST:PORT with a DNS name or IP and a port
// in 1..65535, as the engine passes a bootstrap address; anything else
// would not form a URL. The error quotes the address.
func CheckBootstrapAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 1..65535", addr, port)
	}
	if host == "" || strings.ContainsAny(host, "/?#@ \t\r\n%") {
		return fmt.Errorf("%q: host %q is not a DNS name or IP address", addr, host)
	}
	return nil
}
