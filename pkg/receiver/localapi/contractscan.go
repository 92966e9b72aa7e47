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

package localapi

import (
	"bytes"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// A request of kind contract carries the engine's block manifest, up to
// 2 MiB, as a JSON value. Decoding it with encoding/json would validate,
// buffer and copy it several times over; the agent only needs where it
// lies, since the Manager reads it once, strictly, against the engine's
// contract (kvwire.ValidateManifest) before it sends those same bytes. So
// the clients' contract requests are read by contractRequest: the body's
// two keys parsed, the manifest skipped over (strings, escapes, nesting)
// and returned as a slice of the body. A manifest that is not JSON is
// refused there, as ManifestRefused; anything else unusual about the body
// is left to encoding/json, which describes it.

// scanContractRequest reads a whole request body of kind contract; ok is
// false when the body is not one (in the subset), and it is then left to
// encoding/json. The manifest aliases raw.
func scanContractRequest(raw []byte) (req receiver.TransferRequest, ok bool) {
	s := scanner{b: raw}
	r, ok := s.contractRequest()
	if !ok || s.skipSpace() != len(raw) {
		return receiver.TransferRequest{}, false
	}
	return *r, true
}

// contractRequest reads {"kind":"contract","manifest":{…}}: both keys, each
// once, in either order, a manifest that is a JSON object of at most
// kvwire.MaxManifestBytes. On false the scanner is where it started.
func (s *scanner) contractRequest() (*receiver.TransferRequest, bool) {
	start := s.i
	fail := func() (*receiver.TransferRequest, bool) {
		s.i = start
		return nil, false
	}
	if !s.char('{') {
		return fail()
	}
	var manifest []byte
	var sawKind bool
	for first := true; ; first = false {
		if s.char('}') {
			break
		}
		if !first && !s.char(',') {
			return fail()
		}
		key, ok := s.str()
		if !ok || !s.char(':') {
			return fail()
		}
		switch {
		case key == "kind" && !sawKind:
			kind, ok := s.str()
			if !ok || kind != WireContract {
				return fail()
			}
			sawKind = true
		case key == "manifest" && manifest == nil:
			if manifest = s.object(); manifest == nil || len(manifest) > kvwire.MaxManifestBytes {
				return fail()
			}
		default:
			return fail()
		}
	}
	if !sawKind || manifest == nil {
		return fail()
	}
	return &receiver.TransferRequest{Manifest: manifest}, true
}

// object skips over a value that starts with '{' up to its matching '}',
// stepping over strings (and their escapes), and returns it; nil when
// there is no '{' or it is not closed. Whether what lies between is JSON
// is not checked here.
func (s *scanner) object() []byte {
	start := s.skipSpace()
	if start >= len(s.b) || s.b[start] != '{' {
		return nil
	}
	depth := 0
	for i := start; i < len(s.b); i++ {
		switch s.b[i] {
		case '"':
			end := stringEnd(s.b, i+1)
			if end < 0 {
				return nil
			}
			i = end
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i = i + 1
				return s.b[start:s.i]
			}
		}
	}
	return nil
}

// stringEnd is the index of the quote closing a string whose contents
// start at i, or -1.
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if b[i] == '"' {
			return i
		}
		i += 2 // a backslash and the character it escapes
		if i > len(b) {
			return -1
		}
	}
}
