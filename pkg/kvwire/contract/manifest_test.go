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
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

func TestDecodeManifestAccepts(t *testing.T) {
	for _, c := range []struct {
		name string
		wire string
		want Manifest
	}{
		{"the engine's encoding", `{"groups":[{"group_id":"full_attention","block_ids":[2,3,4]},{"group_id":"linear_attention_0","block_ids":[14]}],"prefix_len":4,"prompt_len":14}`,
			Manifest{Groups: []ManifestGroup{{"full_attention", []int64{2, 3, 4}}, {"linear_attention_0", []int64{14}}}, PrefixLen: 4, PromptLen: 14}},
		{"white space and key order", " {\n\"prompt_len\" : 14 ,\t\"prefix_len\":0, \"groups\" : [ { \"block_ids\" : [ ] , \"group_id\" : \"a\" } ] }\r\n",
			Manifest{Groups: []ManifestGroup{{"a", nil}}, PromptLen: 14}},
		{"escaped keys and ids", `{"gro\u0075ps":[{"group_id":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","block_ids":[9223372036854775807]}],"prefix_len":0,"prompt_len":1}`,
			Manifest{Groups: []ManifestGroup{{"café 😀 \"q\" \\ /", []int64{9223372036854775807}}}, PromptLen: 1}},
		{"a lone surrogate reads as U+FFFD", `{"groups":[{"group_id":"\ud800x","block_ids":[-9223372036854775808]}],"prefix_len":0,"prompt_len":1}`,
			Manifest{Groups: []ManifestGroup{{"\ufffdx", []int64{-9223372036854775808}}}, PromptLen: 1}},
		{"no groups", `{"groups":[],"prefix_len":0,"prompt_len":0}`, Manifest{Groups: []ManifestGroup{}}},
		{"minus zero", `{"groups":[{"group_id":"","block_ids":[-0]}],"prefix_len":-0,"prompt_len":1}`,
			Manifest{Groups: []ManifestGroup{{"", []int64{0}}}, PromptLen: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeManifest([]byte(c.wire))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			// encoding/json reads the same values.
			var std struct {
				Groups []struct {
					GroupID  string  `json:"group_id"`
					BlockIDs []int64 `json:"block_ids"`
				} `json:"groups"`
				PrefixLen int64 `json:"prefix_len"`
				PromptLen int64 `json:"prompt_len"`
			}
			if err := json.Unmarshal([]byte(c.wire), &std); err != nil {
				t.Fatal(err)
			}
			if std.PromptLen != got.PromptLen || std.PrefixLen != got.PrefixLen || len(std.Groups) != len(got.Groups) ||
				(len(got.Groups) > 0 && (std.Groups[0].GroupID != got.Groups[0].GroupID || !reflect.DeepEqual(std.Groups[0].BlockIDs, nilIfEmpty(got.Groups[0].BlockIDs)))) {
				t.Fatalf("encoding/json reads %+v", std)
			}
		})
	}
}

func TestDecodeManifestRefuses(t *testing.T) {
	big := `{"groups":[],"prefix_len":0,"prompt_len":1` + strings.Repeat(" ", MaxManifestBytes) + `}`
	for _, c := range []struct {
		name, wire string
		reason     kvwire.Reason
		field      string
	}{
		{"empty", ``, kvwire.ReasonPayloadSize, ""},
		{"over 2 MiB", big, kvwire.ReasonPayloadSize, ""},
		{"a list", `[]`, kvwire.ReasonMalformedJSON, ""},
		{"trailing bytes", `{"groups":[],"prefix_len":0,"prompt_len":1}x`, kvwire.ReasonMalformedJSON, ""},
		{"two objects", `{"groups":[],"prefix_len":0,"prompt_len":1}{}`, kvwire.ReasonMalformedJSON, ""},
		{"unknown key", `{"groups":[],"prefix_len":0,"prompt_len":1,"x":1}`, kvwire.ReasonUnknownField, "x"},
		{"duplicate key", `{"groups":[],"prefix_len":0,"prefix_len":0,"prompt_len":1}`, kvwire.ReasonDuplicateKey, "prefix_len"},
		{"missing prompt_len", `{"groups":[],"prefix_len":0}`, kvwire.ReasonMissingField, "prompt_len"},
		{"null groups", `{"groups":null,"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMissingField, "groups"},
		{"null prefix_len", `{"groups":[],"prefix_len":null,"prompt_len":1}`, kvwire.ReasonMissingField, "prefix_len"},
		{"negative prefix_len", `{"groups":[],"prefix_len":-16,"prompt_len":1}`, kvwire.ReasonOutOfRange, "prefix_len"},
		{"float prompt_len", `{"groups":[],"prefix_len":0,"prompt_len":1.0}`, kvwire.ReasonNotAnInteger, "prompt_len"},
		{"exponent", `{"groups":[],"prefix_len":0,"prompt_len":1e3}`, kvwire.ReasonNotAnInteger, "prompt_len"},
		{"string prompt_len", `{"groups":[],"prefix_len":0,"prompt_len":"1"}`, kvwire.ReasonNotAnInteger, "prompt_len"},
		{"leading zero", `{"groups":[],"prefix_len":0,"prompt_len":01}`, kvwire.ReasonMalformedJSON, ""},
		{"prompt_len over 64 bits", `{"groups":[],"prefix_len":0,"prompt_len":9223372036854775808}`, kvwire.ReasonOutOfRange, "prompt_len"},
		{"block id a boolean", `{"groups":[{"group_id":"a","block_ids":[1,true]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonNotAnInteger, "groups[0].block_ids[1]"},
		{"block id a float", `{"groups":[{"group_id":"a","block_ids":[2.5]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonNotAnInteger, "groups[0].block_ids[0]"},
		{"block id under 64 bits", `{"groups":[{"group_id":"a","block_ids":[-9223372036854775809]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonOutOfRange, "groups[0].block_ids[0]"},
		{"block ids null", `{"groups":[{"group_id":"a","block_ids":null}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMissingField, "groups[0].block_ids"},
		{"block ids a string", `{"groups":[{"group_id":"a","block_ids":"12"}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMalformedJSON, "groups[0].block_ids"},
		{"group_id a number", `{"groups":[{"group_id":7,"block_ids":[]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonInvalidValue, "groups[0].group_id"},
		{"group_id missing", `{"groups":[{"block_ids":[]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMissingField, "groups[0].group_id"},
		{"unknown group key", `{"groups":[{"group_id":"a","block_ids":[],"n":1}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonUnknownField, "groups[0].n"},
		{"group a list", `{"groups":[["a"]],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMalformedJSON, "groups[0]"},
		{"unterminated string", `{"groups":[{"group_id":"a`, kvwire.ReasonMalformedJSON, "groups[0].group_id"},
		{"invalid escape", `{"groups":[{"group_id":"\x","block_ids":[]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMalformedJSON, "groups[0].group_id"},
		{"control byte in a string", "{\"groups\":[{\"group_id\":\"a\tb\",\"block_ids\":[]}],\"prefix_len\":0,\"prompt_len\":1}", kvwire.ReasonMalformedJSON, "groups[0].group_id"},
		{"not UTF-8", "{\"groups\":[{\"group_id\":\"\xff\",\"block_ids\":[]}],\"prefix_len\":0,\"prompt_len\":1}", kvwire.ReasonMalformedJSON, "groups[0].group_id"},
		{"missing comma", `{"groups":[{"group_id":"a","block_ids":[1 2]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMalformedJSON, "groups[0].block_ids"},
		{"trailing comma", `{"groups":[{"group_id":"a","block_ids":[1,]}],"prefix_len":0,"prompt_len":1}`, kvwire.ReasonMalformedJSON, "groups[0].block_ids[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(c.wire))
			e := kvwire.AsError(err)
			if e == nil || e.Reason != c.reason || e.Field != c.field || e.Kind != kvwire.KindManifest {
				t.Fatalf("got %v; want reason %s field %q", err, c.reason, c.field)
			}
		})
	}
}

func TestManifestWireBytes(t *testing.T) {
	m := Manifest{Groups: []ManifestGroup{{"é\"", []int64{1, -2}}}, PrefixLen: 0, PromptLen: 3}
	b, err := m.WireBytes()
	if want := `{"groups":[{"group_id":"\u00e9\"","block_ids":[1,-2]}],"prefix_len":0,"prompt_len":3}`; err != nil || string(b) != want {
		t.Fatalf("WireBytes = %s, %v; want %s", b, err, want)
	}
	huge := Manifest{Groups: []ManifestGroup{{"a", make([]int64, MaxManifestBytes/2)}}, PromptLen: 1}
	if _, err := huge.WireBytes(); kvwire.ReasonOf(err) != kvwire.ReasonPayloadSize {
		t.Fatalf("a %d-block manifest: %v, want TooLarge", MaxManifestBytes/2, err)
	}
}

func nilIfEmpty(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}
