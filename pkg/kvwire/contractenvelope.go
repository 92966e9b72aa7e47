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

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

const (
	// MaxManifestBytes bounds a block manifest's wire JSON (the engine's
	// MAX_CACHE_MANIFEST_WIRE_BYTES).
	MaxManifestBytes = 2 << 20
	// MaxContractEndpointBytes and MaxContractSessionBytes bound a contract
	// registration's decode_ip and session frames, as the engine does.
	MaxContractEndpointBytes = 255
	MaxContractSessionBytes  = 512
)

// CheckContractEnvelope checks what the engine's _load_wire_json checks
// before it reads a contract: 1..MaxContractBytes bytes holding one JSON
// object. It is stricter in one way: the bytes must be UTF-8 (Python would
// also take UTF-16 and UTF-32). The contract's content is pkg/transferplan's
// to judge.
func CheckContractEnvelope(raw []byte) error {
	return checkJSONObject(KindContract, -1, "cache_layout", raw, plancontract.MaxBytes)
}

func checkJSONObject(kind MessageKind, frame int, field string, raw []byte, limit int) error {
	if len(raw) == 0 || len(raw) > limit {
		return frameError(kind, frame, field, ReasonPayloadSize, "%d bytes; the engine takes 1..%d", len(raw), limit)
	}
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return frameError(kind, frame, field, ReasonMalformedJSON, "not valid UTF-8 JSON: %s", quote(raw))
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); t[0] != '{' {
		return frameError(kind, frame, field, ReasonMalformedJSON, "a JSON %s, not an object", jsonKindOf(t[0]))
	}
	return nil
}

func jsonKindOf(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// canonicalUint reads frame i the way the engine's _bounded_ascii_uint does:
// 1 to len(str(hi)) ASCII digits, no sign, no leading zero, within [lo, hi].
func (r frameReader) canonicalUint(i int, field string, lo, hi int64) (int64, *Error) {
	b := r.frames[i]
	maxDigits := len(strconv.FormatInt(hi, 10))
	if len(b) == 0 || len(b) > maxDigits {
		return 0, frameError(r.kind, i, field, ReasonNotCanonical, "%s: want 1 to %d ASCII digits", quote(b), maxDigits)
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, frameError(r.kind, i, field, ReasonNotCanonical, "%s holds a byte other than an ASCII digit", quote(b))
		}
	}
	if len(b) > 1 && b[0] == '0' {
		return 0, frameError(r.kind, i, field, ReasonNotCanonical, "%s has a leading zero", quote(b))
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || v < uint64(lo) || v > uint64(hi) {
		return 0, frameError(r.kind, i, field, ReasonOutOfRange, "%s is outside [%d, %d]", b, lo, hi)
	}
	return int64(v), nil
}

// boundedText reads a printable-ASCII token of at most limit bytes.
func (r frameReader) boundedText(i int, field string, limit int) (string, *Error) {
	if n := len(r.frames[i]); n > limit {
		return "", frameError(r.kind, i, field, ReasonOutOfRange, "%d bytes; the engine takes at most %d", n, limit)
	}
	return r.text(i, field)
}
