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

package localapi

import (
	"bytes"
	"testing"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
)

// bigManifestLine is a stream request line carrying a manifest of close to
// kvcontract.MaxManifestBytes (one group of 16-token blocks).
func bigManifestLine(tb testing.TB) (line, manifest []byte) {
	tb.Helper()
	var ids []int64
	size := len(`{"groups":[{"group_id":"full_attention","block_ids":[]}],"prefix_len":0,"prompt_len":0000000000}`)
	for i := int64(0); size+8 < kvcontract.MaxManifestBytes; i++ {
		ids = append(ids, 1_000_000+i*7919%8_999_999)
		size += 8
	}
	m := kvcontract.Manifest{Groups: []kvcontract.ManifestGroup{{GroupID: "full_attention", BlockIDs: ids}}, PromptLen: int64(len(ids)) * 16}
	manifest, err := m.WireBytes()
	if err != nil {
		tb.Fatal(err)
	}
	line = append([]byte(`{"op":"request","room":7,"ref":3,"request":{"kind":"contract","manifest":`), manifest...)
	return append(line, "}}"...), manifest
}

// BenchmarkStreamRequestLine2MiB is what the agent pays to read a stream
// line carrying a 2 MiB manifest into the request it hands the Manager
// (which checks it once and sends its bytes to every target): B/op is the
// copies of the manifest this costs.
func BenchmarkStreamRequestLine2MiB(b *testing.B) {
	line, manifest := bigManifestLine(b)
	b.SetBytes(int64(len(manifest)))
	b.ReportAllocs()
	for b.Loop() {
		op, err := DecodeOp(line)
		if err != nil {
			b.Fatal(err)
		}
		req := op.parsed
		if req == nil {
			r, err := parseRequestBytes(op.Request)
			if err != nil {
				b.Fatal(err)
			}
			req = &r
		}
		if !bytes.Equal(req.Manifest, manifest) {
			b.Fatal("the manifest is not the line's")
		}
	}
}
