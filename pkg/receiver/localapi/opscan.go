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
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// scanOp decodes an operation line the way DecodeOp's encoding/json path
// would, without reflection, for the lines the clients write: one object
// whose keys are exactly the protocol's, each once; integers written
// plainly; strings of printable ASCII without escapes; a request body of
// the v1 kind; or a contract request as the clients write it
// (contractscan.go: its manifest is not decoded, and aliases line). Whatever falls outside that subset (an escape, a float, a
// null, a duplicate or unknown key, another request kind, a malformed
// line) returns ok false and is left to encoding/json, which decides and
// describes it. Where scanOp accepts a line, its result is the one the
// slow path gives (FuzzScanOpAgreesWithDecodeOp holds it to that); the
// engine stream decodes every operation, so this is its hot path.
//
// The request is returned parsed; op.Request aliases line.
func scanOp(line []byte) (op StreamOp, req *receiver.TransferRequest, ok bool) {
	if op, req, ok := scanContractLine(line); ok {
		return op, req, true
	}
	s := scanner{b: line}
	var seen uint8
	const (
		sawOp = 1 << iota
		sawRoom
		sawRef
		sawAddr
		sawRequest
	)
	if !s.char('{') {
		return op, nil, false
	}
	for first := true; ; first = false {
		if s.char('}') {
			if first {
				return op, nil, false
			}
			break
		}
		if !first && !s.char(',') {
			return op, nil, false
		}
		key, kok := s.str()
		if !kok || !s.char(':') {
			return op, nil, false
		}
		var bit uint8
		switch key {
		case "op":
			bit = sawOp
			v, vok := s.str()
			if !vok {
				return op, nil, false
			}
			op.Op = v
		case "room":
			bit = sawRoom
			v, vok := s.int()
			if !vok {
				return op, nil, false
			}
			op.Room = &v
		case "ref":
			bit = sawRef
			v, vok := s.int()
			if !vok {
				return op, nil, false
			}
			op.Ref = v
		case "bootstrapAddr":
			bit = sawAddr
			v, vok := s.str()
			if !vok {
				return op, nil, false
			}
			op.BootstrapAddr = &v
		case "request":
			bit = sawRequest
			start := s.skipSpace()
			r, rok := s.request()
			if !rok {
				return op, nil, false
			}
			op.Request, req = line[start:s.i], r
		default:
			return op, nil, false
		}
		if seen&bit != 0 {
			return op, nil, false
		}
		seen |= bit
	}
	s.skipSpace()
	if s.i != len(s.b) || op.Room == nil || *op.Room < 0 {
		return op, nil, false
	}
	switch op.Op {
	case OpOpen:
		ok = op.BootstrapAddr != nil && req == nil
	case OpRequest:
		ok = req != nil && op.BootstrapAddr == nil
	case OpClear:
		ok = op.BootstrapAddr == nil && req == nil
	}
	if !ok {
		return StreamOp{}, nil, false
	}
	return op, req, true
}

// scanner reads the JSON subset scanOp accepts.
type scanner struct {
	b []byte
	i int
}

// skipSpace skips JSON whitespace and returns where the next token starts.
func (s *scanner) skipSpace() int {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i
		}
	}
	return s.i
}

// char consumes c (after whitespace) if it is next.
func (s *scanner) char(c byte) bool {
	if s.skipSpace() < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (s *scanner) str() (string, bool) {
	if !s.char('"') {
		return "", false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := string(s.b[start:s.i])
			s.i++
			return v, true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return "", false
		}
	}
	return "", false
}

// int reads an integer written as JSON writes one (no fraction, exponent
// or leading zero) that fits an int64.
func (s *scanner) int() (int64, bool) {
	s.skipSpace()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var u uint64
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(s.b[s.i]-'0')
	}
	digits := s.i - start
	switch {
	case digits == 0, digits > 1 && s.b[start] == '0', digits > 19:
		return 0, false
	case s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E'):
		return 0, false
	case neg && u > 1<<63, !neg && u > 1<<63-1:
		return 0, false
	case neg:
		return -int64(u), true // -(1<<63) wraps to itself, as it should
	}
	return int64(u), true
}

// ints reads an array of integers ([] gives an empty, non-nil slice, as
// encoding/json does).
func (s *scanner) ints() ([]int64, bool) {
	if !s.char('[') {
		return nil, false
	}
	v := []int64{}
	if s.char(']') {
		return v, true
	}
	for {
		n, ok := s.int()
		if !ok {
			return nil, false
		}
		v = append(v, n)
		if s.char(']') {
			return v, true
		}
		if !s.char(',') {
			return nil, false
		}
	}
}

// request reads a v1 request body: what parseRequestBytes accepts, but
// only within the subset.
func (s *scanner) request() (*receiver.TransferRequest, bool) {
	if !s.char('{') {
		return nil, false
	}
	var req receiver.TransferRequest
	var sawKV, sawAux, sawPrefix, sawMamba, sawKind bool
	seen := func(b *bool) bool {
		was := *b
		*b = true
		return !was
	}
	for first := true; ; first = false {
		if s.char('}') {
			break
		}
		if !first && !s.char(',') {
			return nil, false
		}
		key, ok := s.str()
		if !ok || !s.char(':') {
			return nil, false
		}
		switch key {
		case "kvIndices":
			if !seen(&sawKV) {
				return nil, false
			}
			req.KVIndices, ok = s.ints()
		case "auxIndex":
			if !seen(&sawAux) {
				return nil, false
			}
			req.AuxIndex, ok = s.int()
		case "decodePrefixLen":
			if !seen(&sawPrefix) {
				return nil, false
			}
			req.DecodePrefixLen, ok = s.int()
		case "mambaIndices":
			if !seen(&sawMamba) {
				return nil, false
			}
			req.MambaIndices, ok = s.ints()
		case "kind":
			if !seen(&sawKind) {
				return nil, false
			}
			var kind string
			kind, ok = s.str()
			ok = ok && kind == WireV1
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	if !sawKV || !sawAux {
		return nil, false
	}
	return &req, true
}
