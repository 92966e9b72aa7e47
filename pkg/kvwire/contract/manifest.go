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
	"github.com/pdtopo/pdtopo/pkg/pyjson"

	"strconv"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Manifest is a block manifest (the engine's CachePDBlockManifest): for one
// room, the decode rank's block ids per cache group, and the prompt span
// they hold. It travels as frame 2 of a pre-allocation, as the compact JSON
//
//	{"groups":[{"group_id":"…","block_ids":[…]},…],"prefix_len":N,"prompt_len":M}
//
// The engine builds it; the agent only checks it (ValidateManifest) and
// forwards its bytes. This type is for tests, peers and the Go client.
type Manifest struct {
	Groups    []ManifestGroup
	PrefixLen int64
	PromptLen int64
}

// ManifestGroup is one cache group's destination blocks, in the order of the
// group's logical slots.
type ManifestGroup struct {
	GroupID  string
	BlockIDs []int64
}

// AppendWire appends the manifest as the engine's to_wire_bytes writes it:
// json.dumps(asdict(m), separators=(",", ":")), ASCII only.
func (m *Manifest) AppendWire(dst []byte) []byte {
	dst = append(dst, `{"groups":[`...)
	for i, g := range m.Groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"group_id":`...)
		dst = pyjson.AppendString(dst, g.GroupID)
		dst = append(dst, `,"block_ids":[`...)
		for k, id := range g.BlockIDs {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, id, 10)
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, `],"prefix_len":`...)
	dst = strconv.AppendInt(dst, m.PrefixLen, 10)
	dst = append(dst, `,"prompt_len":`...)
	dst = strconv.AppendInt(dst, m.PromptLen, 10)
	return append(dst, '}')
}

// WireBytes encodes the manifest, refusing (ReasonPayloadSize) one over
// MaxManifestBytes, as the engine's to_wire_bytes does.
func (m *Manifest) WireBytes() ([]byte, error) {
	b := m.AppendWire(nil)
	if len(b) > MaxManifestBytes {
		return nil, kvwire.FieldError(kvwire.KindManifest, "", kvwire.ReasonPayloadSize, "%d bytes; a manifest is at most %d", len(b), MaxManifestBytes)
	}
	return b, nil
}

// DecodeManifest parses a manifest's wire bytes. It takes what the engine's
// from_wire_bytes takes from a conforming sender, and is stricter where the
// engine would crash later or read nonsense: block ids, prefix_len and
// prompt_len are JSON integers of 64 bits (not floats or booleans),
// prefix_len is not negative, and unknown or repeated keys are refused.
func DecodeManifest(raw []byte) (Manifest, error) {
	s := manifestScan{raw: raw, keep: -1, collect: true}
	if err := s.run(); err != nil {
		return Manifest{}, err
	}
	m := Manifest{PrefixLen: s.prefixLen, PromptLen: s.promptLen, Groups: make([]ManifestGroup, len(s.groups))}
	for i, g := range s.groups {
		m.Groups[i] = ManifestGroup{GroupID: g.id, BlockIDs: g.ids}
	}
	return m, nil
}
