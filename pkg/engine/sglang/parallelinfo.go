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

package sglang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/pdtopo/pdtopo/pkg/engine"
)

// What decode's PrefillServerInfo(**data) makes of the answer's keys: the
// dataclass's fields without a default must be there (a missing one is a
// TypeError, and the handshake fails), the others may be left out, and a
// key it has no field for is a TypeError too. __post_init__ converts with
// int(), str() and bool(); SGLang's server only ever sends JSON integers,
// strings and booleans there (what its prefill ranks registered), so
// pdtopo takes only those, in range, and refuses the rest as the answer of
// something that is not an SGLang bootstrap server.
type keyKind int

const (
	kindSize     keyKind = iota // an integer 1..4096 (the API's bound on sizes)
	kindPageSize                // null (not reported) or an integer 1..65536
	kindDtype                   // null (not reported) or a dtype word
	kindBool                    // true or false
	kindPort                    // null or an integer 0..65535
	kindIgnored                 // any JSON value: decode overwrites it (_resolve_rank_mapping)
)

type infoKey struct {
	kind     keyKind
	required bool
}

// parallelInfoKeys are PrefillServerInfo's fields at the reference commit.
var parallelInfoKeys = map[string]infoKey{
	"attn_tp_size":                  {kindSize, true},
	"attn_cp_size":                  {kindSize, true},
	"dp_size":                       {kindSize, true},
	"pp_size":                       {kindSize, true},
	"page_size":                     {kindPageSize, true},
	"kv_cache_dtype":                {kindDtype, true},
	"follow_bootstrap_room":         {kindBool, true},
	"enable_dsa_cache_layer_split":  {kindBool, false},
	"prefill_http_port":             {kindPort, false},
	"target_tp_rank":                {kindIgnored, false},
	"target_tp_ranks":               {kindIgnored, false},
	"target_cp_ranks":               {kindIgnored, false},
	"target_pp_ranks":               {kindIgnored, false},
	"required_dst_info_num":         {kindIgnored, false},
	"required_prefill_response_num": {kindIgnored, false},
}

// requiredKeys in the dataclass's order, so the first missing one named is
// the one Python's TypeError names first.
var requiredKeys = []string{"attn_tp_size", "attn_cp_size", "dp_size", "pp_size", "page_size", "kv_cache_dtype", "follow_bootstrap_room"}

// dtypeWord is what a --kv-cache-dtype can be (auto, bfloat16, fp8_e4m3,
// fp4_e2m1, ...): a short word, so that a status quoting it quotes no more
// than 32 bytes of what the server sent.
var dtypeWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

// jsonInteger is a JSON number without fraction or exponent.
var jsonInteger = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,9})$`)

// DecodeParallelInfo decodes the bootstrap server's parallel-info answer
// (at most MaxParallelInfoBytes) as decode's PrefillServerInfo(**data)
// would take it, or refuses it with a *engine.LivePrefillError. A key
// given twice is refused too: Python would keep the last, and no SGLang
// server sends one twice.
func DecodeParallelInfo(answer []byte) (engine.LivePrefill, error) {
	if len(answer) > MaxParallelInfoBytes {
		return engine.LivePrefill{}, refuse("TooLarge", "the answer is %d bytes; at most %d are read", len(answer), MaxParallelInfoBytes)
	}
	values, err := objectKeys(answer)
	if err != nil {
		return engine.LivePrefill{}, err
	}
	for _, k := range requiredKeys {
		if _, ok := values[k]; !ok {
			return engine.LivePrefill{}, refuse("MissingKey "+k, "the answer has no %s (PrefillServerInfo requires it)", k)
		}
	}
	var out engine.LivePrefill
	ints := map[string]*int{"attn_tp_size": &out.AttentionTP, "attn_cp_size": &out.CP, "dp_size": &out.DP, "pp_size": &out.PP, "page_size": &out.PageSize}
	for key, raw := range values {
		v, err := checkValue(key, parallelInfoKeys[key].kind, raw)
		if err != nil {
			return engine.LivePrefill{}, err
		}
		switch {
		case ints[key] != nil:
			*ints[key] = v.n
		case key == "kv_cache_dtype":
			out.KVCacheDtype = v.s
		}
	}
	return out, nil
}

// objectKeys splits a JSON object into its keys' raw values, refusing
// anything else, an unknown key and a key given twice.
func objectKeys(answer []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(answer))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, refuse("NotAnObject", "the answer is not a JSON object")
	}
	values := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, refuse("NotJSON", "the answer is not JSON: %v", err)
		}
		key, _ := t.(string)
		if _, known := parallelInfoKeys[key]; !known {
			return nil, refuse("UnknownKey", "the answer has key %s, which PrefillServerInfo has no field for", strconv.Quote(cut(key)))
		}
		if _, twice := values[key]; twice {
			return nil, refuse("DuplicateKey "+key, "the answer gives %s twice", key)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, refuse("NotJSON", "the answer is not JSON: %v", err)
		}
		values[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, refuse("NotJSON", "the answer is not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refuse("TrailingData", "the answer goes on after its JSON object")
	}
	return values, nil
}

// intRanges are the integer kinds' bounds.
var intRanges = map[keyKind][2]int{kindSize: {1, 4096}, kindPageSize: {1, 65536}, kindPort: {0, 65535}}

type infoValue struct {
	n int
	s string
}

// checkValue checks one key's value against its kind.
func checkValue(key string, kind keyKind, raw json.RawMessage) (infoValue, error) {
	null := string(raw) == "null"
	switch kind {
	case kindIgnored:
		return infoValue{}, nil
	case kindBool:
		if string(raw) != "true" && string(raw) != "false" {
			return infoValue{}, refuse("NotBoolean "+key, "%s is not true or false", key)
		}
		return infoValue{}, nil
	case kindDtype:
		if null {
			return infoValue{}, nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil || !dtypeWord.MatchString(s) {
			return infoValue{}, refuse("NotADtype "+key, "%s is not a dtype word of at most 32 letters, digits, '_', '.' or '-'", key)
		}
		return infoValue{s: s}, nil
	}
	if null && kind != kindSize {
		return infoValue{}, nil
	}
	if !jsonInteger.Match(raw) {
		return infoValue{}, refuse("NotAnInteger "+key, "%s is not an integer", key)
	}
	r := intRanges[kind]
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < r[0] || n > r[1] {
		// raw is at most 11 digits (jsonInteger): the code may quote it.
		return infoValue{}, refuse(fmt.Sprintf("OutOfRange %s=%s (%d..%d)", key, raw, r[0], r[1]), "%s %s is out of range %d..%d", key, raw, r[0], r[1])
	}
	return infoValue{n: n}, nil
}

func refuse(code, format string, args ...any) error {
	return &engine.LivePrefillError{Code: code, Detail: "SGLang parallel info: " + fmt.Sprintf(format, args...)}
}

// cut shortens what the answer said for a message.
func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
