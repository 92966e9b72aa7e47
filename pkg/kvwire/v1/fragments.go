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
	"fmt"
	"strconv"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// FragmentsVersion is the version of the fragment frames this package
// speaks; a request's frame 12 carries it as ASCII decimal.
const FragmentsVersion = 1

// fragmentKeys are the v1 wire keys, in the order the reference writes them.
var fragmentKeys = [...]string{
	"buffer_index", "buffer_kind", "src_rank", "dst_rank",
	"src_page_stride_bytes", "dst_page_stride_bytes",
	"src_byte_offset", "dst_byte_offset", "bytes_per_page", "page_count",
}

// FragmentFrames are the two frames ["1", JSON] that carry a target's
// fragments. A target's fragments are fixed by its plan, so a sender encodes
// them once and reuses them for every room. The zero value means "none".
type FragmentFrames struct {
	Version, Payload []byte
}

// EncodeFragmentFrames encodes fragments as the version frame "1" and the
// compact JSON list, byte-identical to the reference's
// json.dumps(payload, separators=(",", ":")). No fragments encode to the zero
// FragmentFrames (no frames are sent).
func EncodeFragmentFrames(fragments []transferplan.TransferFragment) FragmentFrames {
	if len(fragments) == 0 {
		return FragmentFrames{}
	}
	return FragmentFrames{
		Version: strconv.AppendInt(nil, FragmentsVersion, 10),
		Payload: appendFragmentsJSON(make([]byte, 0, 200*len(fragments)+2), fragments),
	}
}

// Empty reports whether no fragment frames are to be sent.
func (f FragmentFrames) Empty() bool { return len(f.Version) == 0 && len(f.Payload) == 0 }

func appendFragmentsJSON(dst []byte, fragments []transferplan.TransferFragment) []byte {
	dst = append(dst, '[')
	for i := range fragments {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendFragment(dst, &fragments[i])
	}
	return append(dst, ']')
}

func appendFragment(dst []byte, f *transferplan.TransferFragment) []byte {
	dst = append(dst, `{"buffer_index":`...)
	dst = strconv.AppendInt(dst, int64(f.BufferIndex), 10)
	dst = append(dst, `,"buffer_kind":`...)
	dst = strconv.AppendQuote(dst, string(f.BufferKind))
	dst = append(dst, `,"src_rank":`...)
	dst = strconv.AppendInt(dst, int64(f.SrcRank), 10)
	dst = append(dst, `,"dst_rank":`...)
	dst = strconv.AppendInt(dst, int64(f.DstRank), 10)
	dst = append(dst, `,"src_page_stride_bytes":`...)
	dst = strconv.AppendInt(dst, f.SrcPageStrideBytes, 10)
	dst = append(dst, `,"dst_page_stride_bytes":`...)
	dst = strconv.AppendInt(dst, f.DstPageStrideBytes, 10)
	dst = append(dst, `,"src_byte_offset":`...)
	dst = strconv.AppendInt(dst, f.SrcByteOffset, 10)
	dst = append(dst, `,"dst_byte_offset":`...)
	dst = strconv.AppendInt(dst, f.DstByteOffset, 10)
	dst = append(dst, `,"bytes_per_page":`...)
	dst = strconv.AppendInt(dst, f.BytesPerPage, 10)
	dst = append(dst, `,"page_count":`...)
	if f.PageCount.Valid {
		dst = strconv.AppendInt(dst, f.PageCount.Value, 10)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}

// DecodeFragments parses the version and payload frames of a request (frames
// 12 and 13). Both empty (or absent: pass nil) means no fragments. Only
// version 1 is accepted; every object must carry every v1 key with an integer
// (page_count: integer or null) and a known buffer kind. Errors are *Error of
// KindFragments.
func DecodeFragments(versionFrame, payloadFrame []byte) ([]transferplan.TransferFragment, error) {
	if len(versionFrame) == 0 && len(payloadFrame) == 0 {
		return nil, nil
	}
	if len(versionFrame) == 0 || len(payloadFrame) == 0 {
		return nil, kvwire.FrameError(kvwire.KindFragments, 12, "fragments_version", kvwire.ReasonFrameCount,
			"version frame %d bytes, payload frame %d bytes; both or neither are required", len(versionFrame), len(payloadFrame))
	}
	version, isInt, _ := kvwire.ParseDecimal(bytes.TrimSpace(versionFrame))
	if !isInt || version != FragmentsVersion {
		return nil, kvwire.FrameError(kvwire.KindFragments, 12, "fragments_version", kvwire.ReasonUnsupportedVersion,
			"version %s, this side speaks %d", kvwire.Quote(versionFrame), FragmentsVersion)
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(payloadFrame, &raw); err != nil {
		return nil, kvwire.FrameError(kvwire.KindFragments, 13, "fragments", kvwire.ReasonMalformedJSON, "%v", err)
	}
	out := make([]transferplan.TransferFragment, len(raw))
	for i, obj := range raw {
		if err := decodeFragment(obj, &out[i]); err != nil {
			err.Detail = fmt.Sprintf("fragment %d: %s", i, err.Detail)
			return nil, err
		}
	}
	return out, nil
}

func decodeFragment(obj map[string]json.RawMessage, f *transferplan.TransferFragment) *kvwire.Error {
	if obj == nil {
		return kvwire.FrameError(kvwire.KindFragments, 13, "fragments", kvwire.ReasonInvalidValue, "not an object")
	}
	for _, key := range fragmentKeys {
		if _, ok := obj[key]; !ok {
			return kvwire.FrameError(kvwire.KindFragments, 13, key, kvwire.ReasonMissingField, "key %q is missing", key)
		}
	}
	var kind string
	if err := json.Unmarshal(obj["buffer_kind"], &kind); err != nil || !transferplan.BufferKind(kind).Valid() {
		return kvwire.FrameError(kvwire.KindFragments, 13, "buffer_kind", kvwire.ReasonInvalidValue, "%s is not a known kind", kvwire.Quote(obj["buffer_kind"]))
	}
	f.BufferKind = transferplan.BufferKind(kind)
	for _, it := range []struct {
		key string
		dst *int64
	}{
		{"src_page_stride_bytes", &f.SrcPageStrideBytes}, {"dst_page_stride_bytes", &f.DstPageStrideBytes},
		{"src_byte_offset", &f.SrcByteOffset}, {"dst_byte_offset", &f.DstByteOffset}, {"bytes_per_page", &f.BytesPerPage},
	} {
		v, err := decodeFragmentInt(obj, it.key)
		if err != nil {
			return err
		}
		*it.dst = v
	}
	for _, it := range []struct {
		key string
		dst *int
	}{{"buffer_index", &f.BufferIndex}, {"src_rank", &f.SrcRank}, {"dst_rank", &f.DstRank}} {
		v, err := decodeFragmentInt(obj, it.key)
		if err != nil {
			return err
		}
		*it.dst = int(v)
	}
	if string(bytes.TrimSpace(obj["page_count"])) != "null" {
		v, err := decodeFragmentInt(obj, "page_count")
		if err != nil {
			return err
		}
		f.PageCount = transferplan.Count(v)
	}
	return nil
}

func decodeFragmentInt(obj map[string]json.RawMessage, key string) (int64, *kvwire.Error) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(obj[key])), 10, 64)
	if err != nil {
		return 0, kvwire.FrameError(kvwire.KindFragments, 13, key, kvwire.ReasonInvalidValue, "%s is not an integer", kvwire.Quote(obj[key]))
	}
	return v, nil
}
