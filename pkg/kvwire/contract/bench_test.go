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
	"math/rand/v2"
	"testing"
)

// bigManifest is a manifest of close to MaxManifestBytes: one full-suffix
// group of 16-token blocks in a 10-million-page arena, and the layout it
// fits.
func bigManifest(tb testing.TB) ([]byte, *ManifestLayout) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var ids []int64
	size := len(`{"groups":[{"group_id":"full_attention","block_ids":[]}],"prefix_len":0,"prompt_len":0000000000}`)
	for size+8 < MaxManifestBytes {
		ids = append(ids, 1_000_000+r.Int64N(8_999_999))
		size += 8
	}
	m := Manifest{Groups: []ManifestGroup{{"full_attention", ids}}, PromptLen: int64(len(ids)) * 16}
	raw, err := m.WireBytes()
	if err != nil {
		tb.Fatal(err)
	}
	if len(raw) < MaxManifestBytes-64 {
		tb.Fatalf("%d bytes", len(raw))
	}
	return raw, &ManifestLayout{PrefixGranularity: 16, Groups: []ManifestGroupRule{
		{GroupID: "full_attention", Policy: PolicyFullSuffix, BlockGranularity: 16, PageCount: 10_000_000}}}
}

// BenchmarkValidateManifest2MiB checks a 2 MiB manifest against the decode
// layout: one pass over the bytes where they lie.
func BenchmarkValidateManifest2MiB(b *testing.B) {
	raw, layout := bigManifest(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateManifest(raw, layout); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPreAllocationFanOut2MiB is what a decode rank pays per room to
// send a 2 MiB manifest to 8 prefill ranks (one a dummy): one check, then
// frames that share the manifest's bytes. B/op stays far below one copy of
// the manifest: no target costs a copy or a re-encoding.
func BenchmarkPreAllocationFanOut2MiB(b *testing.B) {
	raw, layout := bigManifest(b)
	const targets = 8
	frames := make([][][]byte, targets)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	room := int64(1 << 40)
	for b.Loop() {
		room++
		if _, err := ValidateManifest(raw, layout); err != nil {
			b.Fatal(err)
		}
		for i := range targets {
			p := PreAllocation{Room: room, SessionID: "10.0.0.7:15500", Manifest: raw}
			if i == targets-1 {
				p.Manifest = nil // the dummy
			}
			frames[i] = p.AppendFrames(frames[i][:0])
		}
	}
	if &frames[0][2][0] != &raw[0] {
		b.Fatal("the manifest frame is a copy")
	}
}

// BenchmarkDecodeManifest2MiB builds the manifest (what a prefill-side peer
// pays; the agent never does).
func BenchmarkDecodeManifest2MiB(b *testing.B) {
	raw, _ := bigManifest(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeManifest(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeContractRegistration(b *testing.B) {
	v := loadContractPairs(b)[0]
	frames := v.Ranks[0].Registration
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRegistration(frames); err != nil {
			b.Fatal(err)
		}
	}
}
