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
	"math"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Registration tells a prefill rank where a decode rank's memory is. It is
// sent once per (bootstrap address, dp group, target set) to every target:
//
//	["None", decode_ip, decode_status_port, session_id,
//	 kv_ptrs (u64 LE each), b"" (aux pointers, always empty),
//	 state_ptrs (u64 LE each), decode_prefix_len]
type Registration struct {
	// DecodeIP and DecodeStatusPort are where the decode rank's status PULL
	// socket listens.
	DecodeIP         string
	DecodeStatusPort int
	// SessionID is the decode rank's transfer-engine session, "host:port".
	SessionID string
	KVPtrs    []uint64
	StatePtrs []uint64
	// DecodePrefixLen is 0 for the reference sender at registration time.
	DecodePrefixLen int64
}

// Frames encodes the registration.
func (g *Registration) Frames() [][]byte {
	var buf []byte
	buf = make([]byte, 0, len(kvwire.RegistrationRoom)+len(g.DecodeIP)+len(g.SessionID)+8*(len(g.KVPtrs)+len(g.StatePtrs))+32)
	var ends [kvwire.RegistrationFrames]int
	buf = append(buf, kvwire.RegistrationRoom...)
	ends[0] = len(buf)
	buf = append(buf, g.DecodeIP...)
	ends[1] = len(buf)
	buf = kvwire.AppendDecimal(buf, int64(g.DecodeStatusPort))
	ends[2] = len(buf)
	buf = append(buf, g.SessionID...)
	ends[3] = len(buf)
	buf = kvwire.AppendU64s(buf, g.KVPtrs)
	ends[4] = len(buf)
	ends[5] = len(buf) // aux pointers: kept as an empty frame for compatibility
	buf = kvwire.AppendU64s(buf, g.StatePtrs)
	ends[6] = len(buf)
	buf = kvwire.AppendDecimal(buf, g.DecodePrefixLen)
	ends[7] = len(buf)
	return kvwire.SliceFrames(make([][]byte, 0, kvwire.RegistrationFrames), buf, ends[:])
}

// DecodeRegistration parses a registration. It accepts exactly the eight
// frames of docs/wire.md (the reference also accepts a legacy seven-frame form
// without state pointers, which no current sender writes). An empty
// decode_prefix_len frame reads as 0, as in the reference.
func DecodeRegistration(frames [][]byte) (Registration, error) {
	var g Registration
	if len(frames) != kvwire.RegistrationFrames {
		return g, kvwire.FieldError(kvwire.KindRegistration, "", kvwire.ReasonFrameCount, "%d frames, want %d", len(frames), kvwire.RegistrationFrames)
	}
	if !kvwire.IsRegistration(frames) {
		return g, kvwire.FrameError(kvwire.KindRegistration, 0, "room", kvwire.ReasonNotRegistration, "%s, want %q", kvwire.Quote(frames[0]), kvwire.RegistrationRoom)
	}
	r := kvwire.FrameReader{Kind: kvwire.KindRegistration, Frames: frames}
	var err *kvwire.Error
	if g.DecodeIP, err = r.Text(1, "decode_ip"); err != nil {
		return g, err
	}
	if e := kvwire.CheckDecodeIP(kvwire.KindRegistration, 1, g.DecodeIP); e != nil {
		return g, e
	}
	if g.DecodeStatusPort, err = r.Port(2, "decode_status_port"); err != nil {
		return g, err
	}
	if g.SessionID, err = r.Text(3, "session_id"); err != nil {
		return g, err
	}
	if g.KVPtrs, err = r.U64s(4, "kv_ptrs"); err != nil {
		return g, err
	}
	if len(frames[5]) != 0 {
		return g, kvwire.FrameError(kvwire.KindRegistration, 5, "aux_ptrs", kvwire.ReasonInvalidValue, "%d bytes; the aux pointer frame is always empty in v1", len(frames[5]))
	}
	if g.StatePtrs, err = r.U64s(6, "state_ptrs"); err != nil {
		return g, err
	}
	if len(frames[7]) != 0 {
		if g.DecodePrefixLen, err = r.IntIn(7, "decode_prefix_len", 0, math.MaxInt64); err != nil {
			return g, err
		}
	}
	return g, kvwire.CheckSessionID(kvwire.KindRegistration, 3, g.SessionID)
}

// Validate reports what in g would not parse on the reference prefill (or
// would crash it later), as the *Error DecodeRegistration would return.
func (g *Registration) Validate() error {
	if err := kvwire.CheckText(kvwire.KindRegistration, 1, "decode_ip", g.DecodeIP); err != nil {
		return err
	}
	if err := kvwire.CheckDecodeIP(kvwire.KindRegistration, 1, g.DecodeIP); err != nil {
		return err
	}
	if err := kvwire.CheckPort(kvwire.KindRegistration, 2, "decode_status_port", g.DecodeStatusPort); err != nil {
		return err
	}
	if err := kvwire.CheckText(kvwire.KindRegistration, 3, "session_id", g.SessionID); err != nil {
		return err
	}
	if err := kvwire.CheckSessionID(kvwire.KindRegistration, 3, g.SessionID); err != nil {
		return err
	}
	if g.DecodePrefixLen < 0 {
		return kvwire.FrameError(kvwire.KindRegistration, 7, "decode_prefix_len", kvwire.ReasonOutOfRange, "%d is negative", g.DecodePrefixLen)
	}
	return nil
}
