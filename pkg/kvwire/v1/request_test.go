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
	"errors"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func sampleFragments() []transferplan.TransferFragment {
	return []transferplan.TransferFragment{
		{BufferIndex: 0, BufferKind: transferplan.TargetK, SrcRank: 2, DstRank: 1, SrcPageStrideBytes: 2048, DstPageStrideBytes: 4096, DstByteOffset: 0, BytesPerPage: 2048},
		{BufferIndex: 1, BufferKind: transferplan.TargetV, SrcRank: 2, DstRank: 1, SrcPageStrideBytes: 2048, DstPageStrideBytes: 4096, DstByteOffset: 2048, BytesPerPage: 2048},
	}
}

func sampleRequest() Request {
	return Request{
		Room: 7301, DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500",
		RequiredDstInfoNum: 1, KVIndices: []int64{3, 4, 9}, AuxIndex: 12, DecodePrefixLen: 0,
		MambaIndices: []int64{5}, Fragments: sampleFragments(),
	}
}

func TestRequestFramesGolden(t *testing.T) {
	q := sampleRequest()
	want := frames("7301", "10.0.0.7", "17001", "10.0.0.7:15500", lei64(3, 4, 9), "12", "1", "0", "0", "", "", lei64(5), "1",
		`[{"buffer_index":0,"buffer_kind":"target_k","src_rank":2,"dst_rank":1,"src_page_stride_bytes":2048,"dst_page_stride_bytes":4096,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":2048,"page_count":null},`+
			`{"buffer_index":1,"buffer_kind":"target_v","src_rank":2,"dst_rank":1,"src_page_stride_bytes":2048,"dst_page_stride_bytes":4096,"src_byte_offset":0,"dst_byte_offset":2048,"bytes_per_page":2048,"page_count":null}]`)
	if got := q.Frames(); !equalFrames(got, want) {
		t.Fatalf("frames:\n got %q\nwant %q", got, want)
	}
	// Pre-encoded fragments give the same bytes.
	if got := q.AppendFrames(nil, EncodeFragmentFrames(q.Fragments)); !equalFrames(got, want) {
		t.Fatalf("AppendFrames:\n got %q\nwant %q", got, want)
	}
	// Without fragments: 12 frames; without mamba indices: frame 11 empty.
	q.Fragments, q.MambaIndices = nil, nil
	want = want[:12]
	want[11] = []byte{}
	if got := q.Frames(); !equalFrames(got, want) {
		t.Fatalf("without fragments:\n got %q\nwant %q", got, want)
	}
}

func TestRequestFramesL15(t *testing.T) {
	q := sampleRequest()
	q.Fragments, q.MambaIndices = nil, nil
	q.MLAL15, q.PageTransferMask, q.PageLocalIndices = true, []bool{true, false, true}, []int64{0, 1}
	want := frames("7301", "10.0.0.7", "17001", "10.0.0.7:15500", lei64(3, 4, 9), "12", "1", "0", "1", "\x01\x00\x01", lei64(0, 1), "")
	if got := q.Frames(); !equalFrames(got, want) {
		t.Fatalf("frames:\n got %q\nwant %q", got, want)
	}
}

func TestDummyRequestFrames(t *testing.T) {
	q := Request{Room: 7301, DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500", RequiredDstInfoNum: 2, Dummy: true}
	want := frames("7301", "10.0.0.7", "17001", "10.0.0.7:15500", "", "", "2", "", "", "", "", "")
	if got := q.Frames(); !equalFrames(got, want) {
		t.Fatalf("dummy:\n got %q\nwant %q", got, want)
	}
	// Fragments are never sent to a dummy, even when handed pre-encoded.
	if got := q.AppendFrames(nil, EncodeFragmentFrames(sampleFragments())); !equalFrames(got, want) {
		t.Fatalf("dummy with fragments:\n got %q\nwant %q", got, want)
	}
	got, err := DecodeRequest(want)
	if err != nil || !reflect.DeepEqual(got, q) {
		t.Fatalf("decode dummy: %+v, %v", got, err)
	}
}

func TestFramesDoNotAlias(t *testing.T) {
	// Frames share a backing array; appending to one must not clobber the next.
	q := sampleRequest()
	f := q.Frames()
	_ = append(f[0], 'X', 'X', 'X', 'X')
	if string(f[1]) != "10.0.0.7" {
		t.Fatalf("append to frame 0 overwrote frame 1: %q", f[1])
	}
}

func TestDecodeRequest(t *testing.T) {
	q := sampleRequest()
	got, err := DecodeRequest(q.Frames())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, q) {
		t.Fatalf("got %+v\nwant %+v", got, q)
	}
	// 14 frames whose fragment frames are empty: no fragments (the reference
	// decodes b"", b"" as ()).
	f := q.Frames()
	f[12], f[13] = nil, nil
	if got, err := DecodeRequest(f); err != nil || got.Fragments != nil {
		t.Fatalf("empty fragment frames: %v, %v", got.Fragments, err)
	}
	// A request for zero pages is not a dummy: aux_index is set.
	f = frames("1", "h", "1", "h:1", "", "0", "1", "0", "0", "", "", "")
	if got, err := DecodeRequest(f); err != nil || got.Dummy {
		t.Fatalf("zero-page request: %+v, %v", got, err)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	valid := func() [][]byte { q := sampleRequest(); return q.Frames() }
	set := func(i int, v string) func([][]byte) [][]byte {
		return func(f [][]byte) [][]byte { f[i] = []byte(v); return f }
	}
	bad := []struct {
		name   string
		edit   func([][]byte) [][]byte
		reason kvwire.Reason
		frame  int
	}{
		{"eleven frames", func(f [][]byte) [][]byte { return f[:11] }, kvwire.ReasonFrameCount, -1},
		{"thirteen frames", func(f [][]byte) [][]byte { return f[:13] }, kvwire.ReasonFrameCount, -1},
		{"fifteen frames", func(f [][]byte) [][]byte { return append(f, nil) }, kvwire.ReasonFrameCount, -1},
		{"registration sent as request", set(0, "None"), kvwire.ReasonNotAnInteger, 0},
		{"room overflows", set(0, "99999999999999999999"), kvwire.ReasonOutOfRange, 0},
		{"ip control byte", set(1, "10.0.0.7\n"), kvwire.ReasonNotASCII, 1},
		{"ip v6", set(1, "::1"), kvwire.ReasonInvalidValue, 1},
		{"port text", set(2, "x"), kvwire.ReasonNotAnInteger, 2},
		{"session no colon", set(3, "h"), kvwire.ReasonInvalidValue, 3},
		{"kv indices misaligned", set(4, "1234567"), kvwire.ReasonMisalignedArray, 4},
		{"aux missing", set(5, ""), kvwire.ReasonNotAnInteger, 5},
		{"aux None", set(5, "None"), kvwire.ReasonNotAnInteger, 5},
		{"required zero", set(6, "0"), kvwire.ReasonOutOfRange, 6},
		{"required empty", set(6, ""), kvwire.ReasonNotAnInteger, 6},
		{"prefix len empty", set(7, ""), kvwire.ReasonNotAnInteger, 7},
		{"flag two", set(8, "2"), kvwire.ReasonInvalidValue, 8},
		{"flag True", set(8, "True"), kvwire.ReasonInvalidValue, 8},
		{"mask byte two", set(9, "\x02"), kvwire.ReasonInvalidValue, 9},
		{"local misaligned", set(10, "abc"), kvwire.ReasonMisalignedArray, 10},
		{"mamba misaligned", set(11, "abc"), kvwire.ReasonMisalignedArray, 11},
		{"fragment version only", set(13, ""), kvwire.ReasonInvalidFragments, 12},
		{"fragment version 2", set(12, "2"), kvwire.ReasonInvalidFragments, 12},
		{"fragment json broken", set(13, "[{"), kvwire.ReasonInvalidFragments, 12},
		{"fragment key missing", set(13, `[{"buffer_index":0}]`), kvwire.ReasonInvalidFragments, 12},
		{"l15 mask short", func(f [][]byte) [][]byte { f[8] = []byte("1"); f[9] = []byte("\x01"); return f }, kvwire.ReasonInconsistentL15Pages, 9},
		{"l15 local count", func(f [][]byte) [][]byte {
			f[8], f[9], f[10] = []byte("1"), []byte("\x01\x01\x00"), []byte(lei64(1))
			return f
		}, kvwire.ReasonInconsistentL15Pages, 10},
		{"dummy with prefix len", func(f [][]byte) [][]byte { f[4], f[5] = nil, nil; return f }, kvwire.ReasonInconsistentDummy, 7},
		{"dummy with fragments", func(f [][]byte) [][]byte {
			for i := 4; i < 12; i++ {
				if i != 6 {
					f[i] = nil
				}
			}
			return f
		}, kvwire.ReasonInconsistentDummy, 12},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(c.edit(valid()))
			wantReason(t, err, c.reason, c.frame)
		})
	}
	// The fragment decoder's error is kept for callers.
	f := valid()
	f[12] = []byte("2")
	_, err := DecodeRequest(f)
	var outer, inner *kvwire.Error
	if !errors.As(err, &outer) || !errors.As(outer.Err, &inner) || inner.Kind != kvwire.KindFragments || inner.Reason != kvwire.ReasonUnsupportedVersion {
		t.Fatalf("want InvalidFragments wrapping a fragments UnsupportedVersion error, got %v", err)
	}
}

func TestRequestValidate(t *testing.T) {
	q := sampleRequest()
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		edit   func(*Request)
		reason kvwire.Reason
		frame  int
	}{
		{"required zero", func(q *Request) { q.RequiredDstInfoNum = 0 }, kvwire.ReasonOutOfRange, 6},
		{"negative aux", func(q *Request) { q.AuxIndex = -1 }, kvwire.ReasonOutOfRange, 5},
		{"negative prefix", func(q *Request) { q.DecodePrefixLen = -1 }, kvwire.ReasonOutOfRange, 7},
		{"l15 mask", func(q *Request) { q.MLAL15 = true }, kvwire.ReasonInconsistentL15Pages, 9},
		{"dummy payload", func(q *Request) { q.Dummy = true }, kvwire.ReasonInconsistentDummy, 4},
		{"space in ip", func(q *Request) { q.DecodeIP = "10.0.0.7 " }, kvwire.ReasonNotASCII, 1},
		{"ipv6 session", func(q *Request) { q.SessionID = "::1:80" }, kvwire.ReasonInvalidValue, 3},
		{"ipv6 decode ip", func(q *Request) { q.DecodeIP = "::1" }, kvwire.ReasonInvalidValue, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := sampleRequest()
			c.edit(&q)
			wantReason(t, q.Validate(), c.reason, c.frame)
		})
	}
}
