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
	"errors"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/engine"
)

// DecodeParallelInfo never panics; what it accepts is in range, and what
// it refuses it refuses with a code of its own words (no byte of the
// answer beyond a key name pdtopo knows or the digits of a number).
func FuzzDecodeParallelInfo(f *testing.F) {
	f.Add([]byte(answer))
	f.Add([]byte(`{"attn_tp_size": 1, "attn_cp_size": 1, "dp_size": 1, "pp_size": 1, "page_size": null, "kv_cache_dtype": null, "follow_bootstrap_room": false}`))
	f.Add([]byte(`{"attn_tp_size": 1, "attn_tp_size": 2}`))
	f.Add([]byte(`{"x\u00e9": 1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeParallelInfo(b)
		if err != nil {
			var le *engine.LivePrefillError
			if !errors.As(err, &le) || le.Code == "" {
				t.Fatalf("%q: error %v is not a LivePrefillError with a code", b, err)
			}
			if len(le.Code) > 80 || strings.ContainsAny(le.Code, "\"<>\n") {
				t.Fatalf("%q: code %q quotes the answer", b, le.Code)
			}
			return
		}
		for _, n := range []int{got.AttentionTP, got.DP, got.PP, got.CP} {
			if n < 1 || n > 4096 {
				t.Fatalf("%q: accepted a size %d", b, n)
			}
		}
		if got.PageSize < 0 || got.PageSize > 65536 || len(got.KVCacheDtype) > 32 {
			t.Fatalf("%q: accepted %+v", b, got)
		}
	})
}
