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

import "testing"

func TestAnswerWire(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		wire       Wire
		reason     Reason
	}{
		{"v1", `{"prefill_tp_size": 8, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false, "kv_item_lens": [2048]}`, WireV1, ""},
		{"v1 missing its flag", `{"prefill_tp_size": 8, "prefill_dp_size": 1}`, WireV1, ""},
		{"contract", `{"prefill_tp_size": 8, "prefill_dp_size": 2, "cache_layout": "{}"}`, WireCacheContract, ""},
		{"no rank registered yet", `{"prefill_tp_size": null, "prefill_dp_size": null, "cache_layout": null}`, WireCacheContract, ""},
		{"not an object", `[]`, "", ReasonMalformedJSON},
		{"null", `null`, "", ReasonMalformedJSON},
	} {
		w, err := AnswerWire([]byte(tc.body))
		if w != tc.wire || ReasonOf(err) != tc.reason {
			t.Errorf("%s: %q, %v; want %q, reason %q", tc.name, w, err, tc.wire, tc.reason)
		}
	}
}

func FuzzAnswerWire(f *testing.F) {
	f.Add([]byte(`{"prefill_tp_size": 8, "prefill_dp_size": 2, "cache_layout": "{}"}`))
	f.Add([]byte(`{"prefill_tp_size": 8, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := AnswerWire(body)
		switch {
		case err != nil && (w != "" || ReasonOf(err) != ReasonMalformedJSON):
			t.Fatalf("wire %q with %v", w, err)
		case err == nil && w != WireV1 && w != WireCacheContract:
			t.Fatalf("wire %q", w)
		}
	})
}
