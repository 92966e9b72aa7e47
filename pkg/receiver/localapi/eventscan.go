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
	"math"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// scanRoomEvent decodes a room event line as AppendRoomEvent writes it,
// without reflection: the clients read one per state change of every room,
// so it is their hot path. It accepts the subset of JSON scanOp does (see
// there), each of the room event's keys once and no other; anything else
// returns ok false and is left to DecodeEvent's encoding/json path.
// FuzzScanRoomEventAgreesWithDecodeEvent holds the two to one reading.
func scanRoomEvent(line []byte) (ev StreamEvent, ok bool) {
	s := scanner{b: line}
	ev.BootstrapToken = -1
	var seen uint8
	if !s.char('{') {
		return ev, false
	}
	for first := true; ; first = false {
		if s.char('}') {
			break
		}
		if !first && !s.char(',') {
			return ev, false
		}
		key, kok := s.str()
		if !kok || !s.char(':') {
			return ev, false
		}
		var bit uint8
		switch key {
		case "ev":
			bit = 1 << 0
			ev.Ev, ok = s.str()
			ok = ok && ev.Ev == EvRoom
		case "ref":
			bit = 1 << 1
			ev.Ref, ok = s.int()
		case "room":
			bit = 1 << 2
			var room int64
			room, ok = s.int()
			ev.Room = &room
		case "status":
			bit = 1 << 3
			var name string
			if name, ok = s.str(); ok {
				st, err := kvwire.ParseTransferPoll(name)
				ev.Status, ok = &st, err == nil
			}
		case "bootstrapToken":
			bit = 1 << 4
			ev.BootstrapToken, ok = s.int()
		case "specCandidateIds":
			bit = 1 << 5
			ev.SpecCandidateIDs, ok = s.int32sOrNull()
		case "failureCode":
			bit = 1 << 6
			ev.FailureCode, ok = s.strOrNull()
		case "failureMessage":
			bit = 1 << 7
			ev.FailureMessage, ok = s.strOrNull()
		default:
			return ev, false
		}
		if !ok || seen&bit != 0 {
			return ev, false
		}
		seen |= bit
	}
	s.skipSpace()
	const needed = 1<<0 | 1<<2 | 1<<3 // ev, room, status
	return ev, s.i == len(s.b) && seen&needed == needed
}

// null consumes a JSON null if it is next.
func (s *scanner) null() bool {
	if s.skipSpace()+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

func (s *scanner) strOrNull() (*string, bool) {
	if s.null() {
		return nil, true
	}
	v, ok := s.str()
	return &v, ok
}

// int32sOrNull reads null (a nil slice) or an array of int32 ([] gives an
// empty, non-nil slice, as encoding/json does).
func (s *scanner) int32sOrNull() ([]int32, bool) {
	if s.null() {
		return nil, true
	}
	if !s.char('[') {
		return nil, false
	}
	v := []int32{}
	if s.char(']') {
		return v, true
	}
	for {
		n, ok := s.int()
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, false
		}
		v = append(v, int32(n))
		if s.char(']') {
			return v, true
		}
		if !s.char(',') {
			return nil, false
		}
	}
}
