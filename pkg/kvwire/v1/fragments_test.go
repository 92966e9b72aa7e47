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
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func TestEncodeFragmentFramesIsCompactV1JSON(t *testing.T) {
	frags := []transferplan.TransferFragment{
		{BufferIndex: 80, BufferKind: transferplan.TargetV, SrcRank: 3, DstRank: 1, SrcPageStrideBytes: 256, DstPageStrideBytes: 512, DstByteOffset: 256, BytesPerPage: 256},
		{BufferIndex: 2, BufferKind: transferplan.MambaState, SrcRank: 0, DstRank: 0, SrcPageStrideBytes: 8, DstPageStrideBytes: 8, BytesPerPage: 8, PageCount: transferplan.Count(3)},
	}
	ff := EncodeFragmentFrames(frags)
	if string(ff.Version) != "1" {
		t.Errorf("version frame %q, want \"1\"", ff.Version)
	}
	// What Python's json.dumps(payload, separators=(",", ":")) writes.
	want := `[{"buffer_index":80,"buffer_kind":"target_v","src_rank":3,"dst_rank":1,"src_page_stride_bytes":256,"dst_page_stride_bytes":512,"src_byte_offset":0,"dst_byte_offset":256,"bytes_per_page":256,"page_count":null},` +
		`{"buffer_index":2,"buffer_kind":"mamba_state","src_rank":0,"dst_rank":0,"src_page_stride_bytes":8,"dst_page_stride_bytes":8,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":8,"page_count":3}]`
	if string(ff.Payload) != want {
		t.Errorf("payload\n got %s\nwant %s", ff.Payload, want)
	}
	// The plan format (encoding/json with transferplan's struct tags) uses
	// the same keys in the same order: the two agree byte for byte.
	std, _ := json.Marshal(frags)
	if !bytes.Equal(std, ff.Payload) {
		t.Errorf("wire encoder and the plan format differ:\n%s\n%s", ff.Payload, std)
	}
	got, err := DecodeFragments(ff.Version, ff.Payload)
	if err != nil || !reflect.DeepEqual(got, frags) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	if empty := EncodeFragmentFrames(nil); !empty.Empty() {
		t.Errorf("no fragments encode as %q %q, want no frames", empty.Version, empty.Payload)
	}
}

func TestDecodeFragmentsRejects(t *testing.T) {
	good := `{"buffer_index":0,"buffer_kind":"target_k","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}`
	cases := []struct {
		name             string
		version, payload string
		reason           kvwire.Reason
		field            string
	}{
		{"payload without version", "", "[" + good + "]", kvwire.ReasonFrameCount, "fragments_version"},
		{"version without payload", "1", "", kvwire.ReasonFrameCount, "fragments_version"},
		{"version 2", "2", "[" + good + "]", kvwire.ReasonUnsupportedVersion, "fragments_version"},
		{"version not a number", "v1", "[" + good + "]", kvwire.ReasonUnsupportedVersion, "fragments_version"},
		{"malformed JSON", "1", "[" + good, kvwire.ReasonMalformedJSON, "fragments"},
		{"not a list", "1", good, kvwire.ReasonMalformedJSON, "fragments"},
		{"missing key", "1", `[{"buffer_index":0}]`, kvwire.ReasonMissingField, "buffer_kind"},
		{"unknown kind", "1", `[{"buffer_index":0,"buffer_kind":"target_q","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}]`, kvwire.ReasonInvalidValue, "buffer_kind"},
		{"string where an int belongs", "1", `[{"buffer_index":"0","buffer_kind":"target_k","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}]`, kvwire.ReasonInvalidValue, "buffer_index"},
		{"null element", "1", `[null]`, kvwire.ReasonInvalidValue, "fragments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeFragments([]byte(tc.version), []byte(tc.payload))
			var e *kvwire.Error
			if !errors.As(err, &e) || e.Kind != kvwire.KindFragments || e.Reason != tc.reason || e.Field != tc.field {
				t.Fatalf("got %v, want a fragments error %s about %s", err, tc.reason, tc.field)
			}
		})
	}
	if frags, err := DecodeFragments(nil, nil); err != nil || frags != nil {
		t.Errorf("no frames: %v, %v; want no fragments", frags, err)
	}
}

// FuzzDecodeFragments: the decoder never panics, and whatever it accepts
// re-encodes to frames that decode to the same fragments.
func FuzzDecodeFragments(f *testing.F) {
	ff := EncodeFragmentFrames([]transferplan.TransferFragment{{BufferIndex: 1, BufferKind: transferplan.TargetK, SrcRank: 2, DstRank: 3,
		SrcPageStrideBytes: 256, DstPageStrideBytes: 512, DstByteOffset: 256, BytesPerPage: 256}})
	f.Add([]byte("1"), ff.Payload)
	f.Add([]byte("1"), []byte("[]"))
	f.Add([]byte("2"), ff.Payload)
	f.Add([]byte(""), []byte("[{}]"))
	f.Add([]byte("1"), []byte(`[{"buffer_index":1e3}]`))
	f.Fuzz(func(t *testing.T, version, payload []byte) {
		frags, err := DecodeFragments(version, payload)
		if err != nil {
			var e *kvwire.Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(frags) == 0 {
			return
		}
		again := EncodeFragmentFrames(frags)
		back, err := DecodeFragments(again.Version, again.Payload)
		if err != nil || !reflect.DeepEqual(back, frags) {
			t.Fatalf("re-encoding %q does not round-trip: %v", again.Payload, err)
		}
	})
}
