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
	"github.com/pdtopo/pdtopo/pkg/pyjson"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

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

// MarshalPython encodes the body as the reference bootstrap server answers.
func (a *RankAddress) MarshalPython() []byte {
	o := pyjson.NewObject(64)
	o.Str("rank_ip", a.RankIP)
	o.Int("rank_port", int64(a.RankPort))
	return o.Bytes()
}

// UnmarshalObject decodes a JSON object body into v, with the key set
// checked separately: encoding/json would silently zero missing keys.
func UnmarshalObject(kind MessageKind, body []byte, v any) (map[string]json.RawMessage, *Error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return nil, FieldError(kind, "", ReasonMalformedJSON, "not a JSON object: %s", JSONDetail(err, body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		field := ""
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			field = te.Field
		}
		return nil, FieldError(kind, field, ReasonMalformedJSON, "%v", err)
	}
	return keys, nil
}

// JSONDetail is the detail of a body that is not a JSON object: the
// decoder's error, or the body quoted.
func JSONDetail(err error, body []byte) string {
	if err != nil {
		return err.Error()
	}
	return Quote(body)
}

// RequireKeys reports the first of keys that is absent or null.
func RequireKeys(kind MessageKind, present map[string]json.RawMessage, keys ...string) *Error {
	for _, k := range keys {
		if raw, ok := present[k]; !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return FieldError(kind, k, ReasonMissingField, "key %q is absent or null", k)
		}
	}
	return nil
}

// DecodeRankAddress parses one rank's address.
func DecodeRankAddress(body []byte) (RankAddress, error) {
	var a RankAddress
	keys, err := UnmarshalObject(KindRankAddress, body, &a)
	if err != nil {
		return RankAddress{}, err
	}
	if err := RequireKeys(KindRankAddress, keys, "rank_ip", "rank_port"); err != nil {
		return RankAddress{}, err
	}
	if err := CheckText(KindRankAddress, -1, "rank_ip", a.RankIP); err != nil {
		return RankAddress{}, err
	}
	if err := CheckPort(KindRankAddress, -1, "rank_port", a.RankPort); err != nil {
		return RankAddress{}, err
	}
	return a, nil
}

// CheckSizes checks a TP and DP size pair as the bootstrap bodies of both
// wires carry them: positive, DP at most TP and dividing it.
func CheckSizes(kind MessageKind, tpField, dpField string, tp, dp int) error {
	if tp < 1 || tp > math.MaxInt32 {
		return FieldError(kind, tpField, ReasonOutOfRange, "%d is not a positive size", tp)
	}
	if dp < 1 || dp > tp {
		return FieldError(kind, dpField, ReasonOutOfRange, "%d is outside [1, %s=%d]", dp, tpField, tp)
	}
	if !(transferplan.Parallelism{TPSize: tp, DPSize: dp}).DPDividesTP() {
		return FieldError(kind, dpField, ReasonInvalidValue, "%d does not divide %s=%d", dp, tpField, tp)
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
