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
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

const (
	// MaxManifestBytes bounds a block manifest's wire JSON (the engine's
	// MAX_CACHE_MANIFEST_WIRE_BYTES).
	MaxManifestBytes = 2 << 20
	// MaxEndpointBytes and MaxSessionBytes bound a contract
	// registration's decode_ip and session frames, as the engine does.
	MaxEndpointBytes = 255
	MaxSessionBytes  = 512
)

// CheckEnvelope checks what the engine's _load_wire_json checks
// before it reads a contract: 1..MaxContractBytes bytes holding one JSON
// object. It is stricter in one way: the bytes must be UTF-8 (Python would
// also take UTF-16 and UTF-32). The contract's content is pkg/transferplan's
// to judge.
func CheckEnvelope(raw []byte) error {
	return checkJSONObject(kvwire.KindContract, -1, "cache_layout", raw, plancontract.MaxBytes)
}

func checkJSONObject(kind kvwire.MessageKind, frame int, field string, raw []byte, limit int) error {
	if len(raw) == 0 || len(raw) > limit {
		return kvwire.FrameError(kind, frame, field, kvwire.ReasonPayloadSize, "%d bytes; the engine takes 1..%d", len(raw), limit)
	}
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return kvwire.FrameError(kind, frame, field, kvwire.ReasonMalformedJSON, "not valid UTF-8 JSON: %s", kvwire.Quote(raw))
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); t[0] != '{' {
		return kvwire.FrameError(kind, frame, field, kvwire.ReasonMalformedJSON, "a JSON %s, not an object", jsonKindOf(t[0]))
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
