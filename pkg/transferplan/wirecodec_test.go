package transferplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestEncodeFragmentsIsCompactV1JSON(t *testing.T) {
	frags := []TransferFragment{
		frag(80, TargetV, 3, 1, 256, 512, 0, 256, 256),
		{BufferIndex: 2, BufferKind: MambaState, SrcRank: 0, DstRank: 0, SrcPageStrideBytes: 8, DstPageStrideBytes: 8, BytesPerPage: 8, PageCount: Count(3)},
	}
	version, payload := EncodeFragments(frags)
	if string(version) != "1" {
		t.Errorf("version frame %q, want \"1\"", version)
	}
	// What Python's json.dumps(payload, separators=(",", ":")) writes.
	want := `[{"buffer_index":80,"buffer_kind":"target_v","src_rank":3,"dst_rank":1,"src_page_stride_bytes":256,"dst_page_stride_bytes":512,"src_byte_offset":0,"dst_byte_offset":256,"bytes_per_page":256,"page_count":null},` +
		`{"buffer_index":2,"buffer_kind":"mamba_state","src_rank":0,"dst_rank":0,"src_page_stride_bytes":8,"dst_page_stride_bytes":8,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":8,"page_count":3}]`
	if string(payload) != want {
		t.Errorf("payload\n got %s\nwant %s", payload, want)
	}
	// encoding/json with the struct tags agrees byte for byte.
	std, _ := json.Marshal(frags)
	if !bytes.Equal(std, payload) {
		t.Errorf("hand encoder and encoding/json differ:\n%s\n%s", payload, std)
	}
	got, err := DecodeFragments(version, payload)
	if err != nil || !reflect.DeepEqual(got, frags) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	if _, empty := EncodeFragments(nil); string(empty) != "[]" {
		t.Errorf("empty list encodes as %q", empty)
	}
}

func TestDecodeFragmentsRejects(t *testing.T) {
	good := `{"buffer_index":0,"buffer_kind":"target_k","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}`
	cases := []struct {
		name             string
		version, payload string
		reason           CodecReason
	}{
		{"payload without version", "", "[" + good + "]", CodecIncompleteFrames},
		{"version without payload", "1", "", CodecIncompleteFrames},
		{"version 2", "2", "[" + good + "]", CodecUnsupportedVersion},
		{"version not a number", "v1", "[" + good + "]", CodecUnsupportedVersion},
		{"malformed JSON", "1", "[" + good, CodecMalformedJSON},
		{"not a list", "1", good, CodecMalformedJSON},
		{"missing key", "1", `[{"buffer_index":0}]`, CodecMissingKey},
		{"unknown kind", "1", `[{"buffer_index":0,"buffer_kind":"target_q","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}]`, CodecInvalidValue},
		{"string where an int belongs", "1", `[{"buffer_index":"0","buffer_kind":"target_k","src_rank":0,"dst_rank":0,"src_page_stride_bytes":1,"dst_page_stride_bytes":1,"src_byte_offset":0,"dst_byte_offset":0,"bytes_per_page":1,"page_count":null}]`, CodecInvalidValue},
		{"null element", "1", `[null]`, CodecInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeFragments([]byte(tc.version), []byte(tc.payload))
			var ce *CodecError
			if !errors.As(err, &ce) || ce.Reason != tc.reason {
				t.Fatalf("got %v, want reason %s", err, tc.reason)
			}
		})
	}
	if frags, err := DecodeFragments(nil, nil); err != nil || frags != nil {
		t.Errorf("no frames: %v, %v; want no fragments", frags, err)
	}
}

// FuzzDecodeFragments: the decoder never panics, and whatever it accepts
// re-encodes to JSON that decodes to the same fragments.
func FuzzDecodeFragments(f *testing.F) {
	_, payload := EncodeFragments([]TransferFragment{frag(1, TargetK, 2, 3, 256, 512, 0, 256, 256)})
	f.Add([]byte("1"), payload)
	f.Add([]byte("1"), []byte("[]"))
	f.Add([]byte("2"), payload)
	f.Add([]byte(""), []byte("[{}]"))
	f.Add([]byte("1"), []byte(`[{"buffer_index":1e3}]`))
	f.Fuzz(func(t *testing.T, version, payload []byte) {
		frags, err := DecodeFragments(version, payload)
		if err != nil {
			var ce *CodecError
			if !errors.As(err, &ce) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(frags) == 0 {
			return
		}
		v, again := EncodeFragments(frags)
		back, err := DecodeFragments(v, again)
		if err != nil || !reflect.DeepEqual(back, frags) {
			t.Fatalf("re-encoding %q does not round-trip: %v", again, err)
		}
	})
}
