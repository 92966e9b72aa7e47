package transferplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ProtocolVersion is the transfer-plan wire protocol version this package speaks.
const ProtocolVersion = 1

// fragmentKeys are the v1 wire keys, in the order the reference writes them.
var fragmentKeys = [...]string{
	"buffer_index", "buffer_kind", "src_rank", "dst_rank",
	"src_page_stride_bytes", "dst_page_stride_bytes",
	"src_byte_offset", "dst_byte_offset", "bytes_per_page", "page_count",
}

// EncodeFragments returns the two frames that carry fragments after a request
// message: the version "1" and the compact JSON list, byte-identical to the
// reference's json.dumps(payload, separators=(",", ":")).
func EncodeFragments(fragments []TransferFragment) (version, payload []byte) {
	return []byte(strconv.Itoa(ProtocolVersion)), AppendFragmentsJSON(make([]byte, 0, 200*len(fragments)+2), fragments)
}

// AppendFragmentsJSON appends the compact v1 JSON list of fragments to dst.
func AppendFragmentsJSON(dst []byte, fragments []TransferFragment) []byte {
	dst = append(dst, '[')
	for i := range fragments {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendFragment(dst, &fragments[i])
	}
	return append(dst, ']')
}

func appendFragment(dst []byte, f *TransferFragment) []byte {
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

// CodecError says why fragment frames could not be decoded.
type CodecError struct {
	Reason CodecReason
	Detail string
}

// CodecReason is a stable code for a fragment decoding failure.
type CodecReason string

const (
	CodecIncompleteFrames   CodecReason = "IncompleteFrames"
	CodecUnsupportedVersion CodecReason = "UnsupportedVersion"
	CodecMalformedJSON      CodecReason = "MalformedJSON"
	CodecMissingKey         CodecReason = "MissingKey"
	CodecInvalidValue       CodecReason = "InvalidValue"
)

func (e *CodecError) Error() string {
	return "transfer fragments: " + string(e.Reason) + ": " + e.Detail
}

// DecodeFragments parses the version and payload frames of a request. Both
// frames empty (or absent: pass nil) means no fragments. Only version 1 is
// accepted; every object must carry every v1 key with an integer (page_count:
// integer or null) and a known buffer kind.
func DecodeFragments(versionFrame, payloadFrame []byte) ([]TransferFragment, error) {
	if len(versionFrame) == 0 && len(payloadFrame) == 0 {
		return nil, nil
	}
	if len(versionFrame) == 0 || len(payloadFrame) == 0 {
		return nil, &CodecError{CodecIncompleteFrames, fmt.Sprintf("version frame %d bytes, payload frame %d bytes; both or neither are required", len(versionFrame), len(payloadFrame))}
	}
	version, err := strconv.Atoi(string(bytes.TrimSpace(versionFrame)))
	if err != nil {
		return nil, &CodecError{CodecUnsupportedVersion, fmt.Sprintf("version frame %q is not a number", truncate(versionFrame))}
	}
	if version != ProtocolVersion {
		return nil, &CodecError{CodecUnsupportedVersion, fmt.Sprintf("version %d, this side speaks %d", version, ProtocolVersion)}
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(payloadFrame, &raw); err != nil {
		return nil, &CodecError{CodecMalformedJSON, err.Error()}
	}
	out := make([]TransferFragment, len(raw))
	for i, obj := range raw {
		if err := decodeFragment(obj, &out[i]); err != nil {
			err.Detail = fmt.Sprintf("fragment %d: %s", i, err.Detail)
			return nil, err
		}
	}
	return out, nil
}

func decodeFragment(obj map[string]json.RawMessage, f *TransferFragment) *CodecError {
	if obj == nil {
		return &CodecError{CodecInvalidValue, "not an object"}
	}
	for _, key := range fragmentKeys {
		if _, ok := obj[key]; !ok {
			return &CodecError{CodecMissingKey, fmt.Sprintf("key %q is missing", key)}
		}
	}
	var kind string
	if err := json.Unmarshal(obj["buffer_kind"], &kind); err != nil || !BufferKind(kind).Valid() {
		return &CodecError{CodecInvalidValue, fmt.Sprintf("buffer_kind %s is not a known kind", truncate(obj["buffer_kind"]))}
	}
	f.BufferKind = BufferKind(kind)
	ints := []struct {
		key string
		dst *int64
	}{
		{"src_page_stride_bytes", &f.SrcPageStrideBytes}, {"dst_page_stride_bytes", &f.DstPageStrideBytes},
		{"src_byte_offset", &f.SrcByteOffset}, {"dst_byte_offset", &f.DstByteOffset}, {"bytes_per_page", &f.BytesPerPage},
	}
	for _, it := range ints {
		v, err := decodeInt(obj, it.key)
		if err != nil {
			return err
		}
		*it.dst = v
	}
	for _, it := range []struct {
		key string
		dst *int
	}{{"buffer_index", &f.BufferIndex}, {"src_rank", &f.SrcRank}, {"dst_rank", &f.DstRank}} {
		v, err := decodeInt(obj, it.key)
		if err != nil {
			return err
		}
		*it.dst = int(v)
	}
	if string(bytes.TrimSpace(obj["page_count"])) != "null" {
		v, err := decodeInt(obj, "page_count")
		if err != nil {
			return err
		}
		f.PageCount = Count(v)
	}
	return nil
}

func decodeInt(obj map[string]json.RawMessage, key string) (int64, *CodecError) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(obj[key])), 10, 64)
	if err != nil {
		return 0, &CodecError{CodecInvalidValue, fmt.Sprintf("%s %s is not an integer", key, truncate(obj[key]))}
	}
	return v, nil
}

func truncate(b []byte) string {
	const limit = 40
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}
