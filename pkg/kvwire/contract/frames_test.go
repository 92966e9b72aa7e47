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
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"bytes"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

const tinyContract = `{"plan":{"prefix_granularity":16},"group_specs":[],"transfer_schema":{"fields":[]}}`

func sampleContractRegistration() Registration {
	return Registration{DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500",
		ArenaPtr: 0x7f3a00000000, Contract: []byte(tinyContract), DecodeTPSize: 4, DecodeTPRank: 3}
}

func TestContractRegistrationFrames(t *testing.T) {
	c := sampleContractRegistration()
	want := frames("None", "10.0.0.7", "17001", "10.0.0.7:15500", le64(0x7f3a00000000), tinyContract, "4", "3")
	got := c.Frames()
	if !equalFrames(got, want) {
		t.Fatalf("Frames = %q", got)
	}
	if &got[5][0] != &c.Contract[0] {
		t.Error("the contract frame is a copy")
	}
	got[6] = append(got[6], '9') // appending to one frame must not reach the next
	if string(got[7]) != "3" {
		t.Fatalf("frame 7 became %q", got[7])
	}
}

func TestDecodeContractRegistrationRefuses(t *testing.T) {
	sample := sampleContractRegistration()
	base := sample.Frames()
	edit := func(i int, v string) [][]byte {
		f := append([][]byte(nil), base...)
		f[i] = []byte(v)
		return f
	}
	for _, c := range []struct {
		name   string
		frames [][]byte
		reason kvwire.Reason
		frame  int
	}{
		{"seven frames", base[:7], kvwire.ReasonFrameCount, -1},
		{"a v1 registration", frames("None", "h", "1", "h:1", le64(1), "", "", "0"), kvwire.ReasonPayloadSize, 5},
		{"frame 0", edit(0, "0"), kvwire.ReasonNotRegistration, 0},
		{"decode_ip with ':'", edit(1, "fd00::1"), kvwire.ReasonInvalidValue, 1},
		{"decode_ip too long", edit(1, strings.Repeat("h", 256)), kvwire.ReasonOutOfRange, 1},
		{"session too long", edit(3, strings.Repeat("h", 507)+":15500"), kvwire.ReasonOutOfRange, 3},
		{"session not host:port", edit(3, "session"), kvwire.ReasonInvalidValue, 3},
		{"port leading zero", edit(2, "017001"), kvwire.ReasonNotCanonical, 2},
		{"port sign", edit(2, "+1"), kvwire.ReasonNotCanonical, 2},
		{"port 0", edit(2, "0"), kvwire.ReasonOutOfRange, 2},
		{"port six digits", edit(2, "100000"), kvwire.ReasonNotCanonical, 2},
		{"pointer 7 bytes", edit(4, le64(1)[:7]), kvwire.ReasonInvalidValue, 4},
		{"pointer 0", edit(4, le64(0)), kvwire.ReasonInvalidValue, 4},
		{"contract empty", edit(5, ""), kvwire.ReasonPayloadSize, 5},
		{"contract a list", edit(5, "[]"), kvwire.ReasonMalformedJSON, 5},
		{"contract not UTF-8", edit(5, "{\"a\":\"\xff\"}"), kvwire.ReasonMalformedJSON, 5},
		{"tp size 0", edit(6, "0"), kvwire.ReasonOutOfRange, 6},
		{"tp size 1025", edit(6, "1025"), kvwire.ReasonOutOfRange, 6},
		{"tp rank = size", edit(7, "4"), kvwire.ReasonOutOfRange, 7},
		{"tp rank negative", edit(7, "-1"), kvwire.ReasonNotCanonical, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRegistration(c.frames)
			wantReason(t, err, c.reason, c.frame)
			if kvwire.AsError(err).Kind != kvwire.KindContractRegistration {
				t.Fatalf("kind %q", kvwire.AsError(err).Kind)
			}
		})
	}
}

// Validate refuses what the decoder would, naming the same frame.
func TestContractRegistrationValidate(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(*Registration)
		reason kvwire.Reason
		frame  int
	}{
		{"ok", func(*Registration) {}, "", 0},
		{"ipv6", func(c *Registration) { c.DecodeIP = "fd00::1" }, kvwire.ReasonInvalidValue, 1},
		{"port", func(c *Registration) { c.DecodeStatusPort = 70000 }, kvwire.ReasonOutOfRange, 2},
		{"session", func(c *Registration) { c.SessionID = "h" }, kvwire.ReasonInvalidValue, 3},
		{"pointer", func(c *Registration) { c.ArenaPtr = 0 }, kvwire.ReasonInvalidValue, 4},
		{"contract", func(c *Registration) { c.Contract = bytes.Repeat([]byte(" "), plancontract.MaxBytes+1) }, kvwire.ReasonPayloadSize, 5},
		{"tp size", func(c *Registration) { c.DecodeTPSize = 2000 }, kvwire.ReasonOutOfRange, 6},
		{"tp rank", func(c *Registration) { c.DecodeTPRank = 4 }, kvwire.ReasonOutOfRange, 7},
	} {
		reg := sampleContractRegistration()
		c.edit(&reg)
		err := reg.Validate()
		_, derr := DecodeRegistration(reg.Frames())
		if c.reason == "" {
			if err != nil || derr != nil {
				t.Errorf("%s: Validate %v, decode %v", c.name, err, derr)
			}
			continue
		}
		wantReason(t, err, c.reason, c.frame)
		if derr == nil || kvwire.AsError(derr).Frame != c.frame {
			t.Errorf("%s: the decoder says %v", c.name, derr)
		}
	}
}

func TestPreAllocation(t *testing.T) {
	manifest := []byte(`{"groups":[],"prefix_len":0,"prompt_len":1}`)
	p := PreAllocation{Room: 1 << 40, SessionID: "10.0.0.7:15500", Manifest: manifest}
	got := p.Frames()
	if !equalFrames(got, frames("1099511627776", "10.0.0.7:15500", string(manifest))) || &got[2][0] != &manifest[0] {
		t.Fatalf("Frames = %q (the manifest must not be copied)", got)
	}
	dummy := PreAllocation{Room: 7, SessionID: "h:1"}
	if d := dummy.Frames(); !equalFrames(d, frames("7", "h:1", "")) || !dummy.Dummy() {
		t.Fatalf("dummy Frames = %q", d)
	}
	back, err := DecodePreAllocation(got)
	if err != nil || back.Room != p.Room || back.SessionID != p.SessionID || !bytes.Equal(back.Manifest, manifest) {
		t.Fatalf("decode: %+v, %v", back, err)
	}
	// a v1 request: twelve frames, the room first
	v1Request := frames("7", "10.0.0.1", "5000", "h:1", "", "0", "1", "0", "0", "", "", "")
	for _, c := range []struct {
		name   string
		frames [][]byte
		reason kvwire.Reason
		frame  int
	}{
		{"v1 request", v1Request, kvwire.ReasonFrameCount, -1},
		{"room leading zero", frames("07", "h:1", ""), kvwire.ReasonNotCanonical, 0},
		{"room 2^63", frames("9223372036854775808", "h:1", ""), kvwire.ReasonOutOfRange, 0},
		{"room 20 digits", frames("10000000000000000000", "h:1", ""), kvwire.ReasonNotCanonical, 0},
		{"registration", frames("None", "h:1", ""), kvwire.ReasonNotCanonical, 0},
		{"session empty", frames("1", "", ""), kvwire.ReasonInvalidValue, 1},
		{"session not host:port", frames("1", "h", ""), kvwire.ReasonInvalidValue, 1},
		{"manifest malformed", frames("1", "h:1", "{"), kvwire.ReasonMalformedJSON, 2},
		{"manifest with unknown key", frames("1", "h:1", `{"groups":[],"prefix_len":0,"prompt_len":1,"x":0}`), kvwire.ReasonUnknownField, 2},
	} {
		_, err := DecodePreAllocation(c.frames)
		wantReason(t, err, c.reason, c.frame)
	}
	if err := (&PreAllocation{Room: -1, SessionID: "h:1"}).Validate(); kvwire.ReasonOf(err) != kvwire.ReasonOutOfRange {
		t.Errorf("negative room: %v", err)
	}
	if err := (&PreAllocation{Room: 1, SessionID: "h:1", Manifest: make([]byte, MaxManifestBytes+1)}).Validate(); kvwire.ReasonOf(err) != kvwire.ReasonPayloadSize {
		t.Errorf("large manifest: %v", err)
	}
}

func TestDecodeParallelInfo(t *testing.T) {
	c := ParallelInfo{PrefillTPSize: 8, PrefillDPSize: 2, CacheLayout: []byte(tinyContract)}
	body := c.MarshalPython()
	if want := `{"prefill_tp_size": 8, "prefill_dp_size": 2, "cache_layout": "{\"plan\":{\"prefix_granularity\":16},\"group_specs\":[],\"transfer_schema\":{\"fields\":[]}}"}`; string(body) != want {
		t.Fatalf("MarshalPython = %s", body)
	}
	if w, err := kvwire.AnswerWire(body); err != nil || w != kvwire.WireCacheContract {
		t.Fatalf("AnswerWire = %q, %v", w, err)
	}
	ans, err := DecodeParallelInfo(body)
	if err != nil || string(ans.CacheLayout) != tinyContract || ans.TPPerDPGroup() != 4 {
		t.Fatalf("contract answer: %+v, %v", ans, err)
	}
	for _, tc := range []struct {
		name, body string
		reason     kvwire.Reason
		field      string
	}{
		{"not an object", `[]`, kvwire.ReasonMalformedJSON, ""},
		{"no rank registered yet", `{"prefill_tp_size": null, "prefill_dp_size": null, "cache_layout": null}`, kvwire.ReasonMissingField, "prefill_tp_size"},
		{"v1 keys beside a contract", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "cache_layout": "{}", "kv_item_lens": []}`, kvwire.ReasonWireMismatch, "kv_item_lens"},
		{"an unknown key", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "cache_layout": "{}", "x": 1}`, kvwire.ReasonUnknownField, "x"},
		{"a float size", `{"prefill_tp_size": 8.0, "prefill_dp_size": 1, "cache_layout": "{}"}`, kvwire.ReasonNotAnInteger, "prefill_tp_size"},
		{"dp not dividing tp", `{"prefill_tp_size": 6, "prefill_dp_size": 4, "cache_layout": "{}"}`, kvwire.ReasonInvalidValue, "prefill_dp_size"},
		{"too many TP ranks", `{"prefill_tp_size": 2050, "prefill_dp_size": 2, "cache_layout": "{}"}`, kvwire.ReasonOutOfRange, "prefill_tp_size"},
		{"a layout that is not a string", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "cache_layout": {}}`, kvwire.ReasonMalformedJSON, "cache_layout"},
		{"a layout that is not ASCII", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "cache_layout": "{\"a\": \"\u00e9\"}"}`, kvwire.ReasonNotASCII, "cache_layout"},
		{"a layout that is not an object", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "cache_layout": "[1]"}`, kvwire.ReasonMalformedJSON, "cache_layout"},
		{"a v1 answer", `{"prefill_tp_size": 8, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false}`, kvwire.ReasonWireMismatch, "enable_mla_l1_5_cache"},
	} {
		_, err := DecodeParallelInfo([]byte(tc.body))
		if e := kvwire.AsError(err); e == nil || e.Reason != tc.reason || e.Field != tc.field {
			t.Errorf("%s: %v; want reason %s field %q", tc.name, err, tc.reason, tc.field)
		}
	}
}

func TestContractRankRegistration(t *testing.T) {
	g := RankRegistration{Role: kvwire.RolePrefill, WorldSize: 4, DPSize: 1, RankIP: "10.0.0.3", RankPort: 41000, EngineRank: 2, CacheLayout: []byte(tinyContract)}
	back, err := DecodeRankRegistration(g.MarshalPython())
	if err != nil || back.EngineRank != 2 || string(back.CacheLayout) != tinyContract {
		t.Fatalf("%+v, %v", back, err)
	}
	for _, c := range []struct{ name, body string }{
		{"v1 body", `{"role": "Prefill", "world_size": 4, "dp_size": 1, "rank_ip": "h", "rank_port": 1, "engine_rank": 0, "enable_mla_l1_5_cache": false, "kv_item_lens": [], "kv_unit_lens": [], "state_item_lens": [], "state_unit_lens": []}`},
		{"null layout", strings.Replace(string(g.MarshalPython()), `"cache_layout": "`, `"cache_layout": null, "x": "`, 1)},
		{"engine rank outside the world", strings.Replace(string(g.MarshalPython()), `"engine_rank": 2`, `"engine_rank": 4`, 1)},
	} {
		if _, err := DecodeRankRegistration([]byte(c.body)); err == nil {
			t.Errorf("%s: accepted", c.name)
		} else {
			wantTypedError(t, err)
		}
	}
}
