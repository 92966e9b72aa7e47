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

package v1

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// p8d4Fragments are the 160 fragments one prefill rank sends decode rank 0
// in the Llama-70B-like P8→D4 plan (80 layers of K and V, one 256-byte head).
func p8d4Fragments() []transferplan.TransferFragment {
	out := make([]transferplan.TransferFragment, 160)
	for i := range out {
		kind := transferplan.TargetK
		if i >= 80 {
			kind = transferplan.TargetV
		}
		out[i] = transferplan.TransferFragment{BufferIndex: i, BufferKind: kind, SrcRank: 1, DstRank: 0,
			SrcPageStrideBytes: 256, DstPageStrideBytes: 512, DstByteOffset: 256, BytesPerPage: 256}
	}
	return out
}

// BenchmarkRequestAppendFrames is the per-room, per-target encoding cost of
// a sender that pre-encodes its targets' fragment frames.
func BenchmarkRequestAppendFrames(b *testing.B) {
	ff := EncodeFragmentFrames(p8d4Fragments())
	q := Request{Room: 1 << 40, DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500",
		RequiredDstInfoNum: 1, KVIndices: make([]int64, 64), AuxIndex: 12}
	frames := make([][]byte, 0, RequestFramesWithFragments)
	b.ReportAllocs()
	for b.Loop() {
		q.Room++
		frames = q.AppendFrames(frames[:0], ff)
	}
}

// BenchmarkDecodeRequest decodes a P8→D4 request with its 160 fragments,
// JSON included: what a prefill rank (or the peer, before its cache) pays.
func BenchmarkDecodeRequest(b *testing.B) {
	q := Request{Room: 1 << 40, DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500",
		RequiredDstInfoNum: 1, KVIndices: make([]int64, 64), AuxIndex: 12, Fragments: p8d4Fragments()}
	frames := q.Frames()
	b.SetBytes(int64(len(frames[13])))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(frames); err != nil {
			b.Fatal(err)
		}
	}
}
