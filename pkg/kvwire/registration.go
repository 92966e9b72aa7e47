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

// RegistrationRoom is frame 0 of a registration: the text the reference
// compares the room frame against to tell a registration from a request.
const RegistrationRoom = "None"

// RegistrationFrames is the number of frames of a registration.
const RegistrationFrames = 8

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

// IsRegistration reports whether a multipart message is a registration
// rather than a request, the way the reference's bootstrap thread decides.
func IsRegistration(frames [][]byte) bool {
	return len(frames) > 0 && string(frames[0]) == RegistrationRoom
}

// Frames encodes the registration.
func (g *Registration) Frames() [][]byte {
	var buf []byte
	buf = make([]byte, 0, len(RegistrationRoom)+len(g.DecodeIP)+len(g.SessionID)+8*(len(g.KVPtrs)+len(g.StatePtrs))+32)
	var ends [RegistrationFrames]int
	buf = append(buf, RegistrationRoom...)
	ends[0] = len(buf)
	buf = append(buf, g.DecodeIP...)
	ends[1] = len(buf)
	buf = appendDecimal(buf, int64(g.DecodeStatusPort))
	ends[2] = len(buf)
	buf = append(buf, g.SessionID...)
	ends[3] = len(buf)
	buf = appendU64s(buf, g.KVPtrs)
	ends[4] = len(buf)
	ends[5] = len(buf) // aux pointers: kept as an empty frame for compatibility
	buf = appendU64s(buf, g.StatePtrs)
	ends[6] = len(buf)
	buf = appendDecimal(buf, g.DecodePrefixLen)
	ends[7] = len(buf)
	return sliceFrames(make([][]byte, 0, RegistrationFrames), buf, ends[:])
}

// sliceFrames cuts buf at ends into frames whose capacity stops at their own
// end, so that appending to one frame can never overwrite the next.
func sliceFrames(dst [][]byte, buf []byte, ends []int) [][]byte {
	start := 0
	for _, end := range ends {
		dst = append(dst, buf[start:end:end])
		start = end
	}
	return dst
}

// DecodeRegistration parses a registration. It accepts exactly the eight
// frames of docs/wire.md (the reference also accepts a legacy seven-frame form
// without state pointers, which no current sender writes). An empty
// decode_prefix_len frame reads as 0, as in the reference.
func DecodeRegistration(frames [][]byte) (Registration, error) {
	var g Registration
	if len(frames) != RegistrationFrames {
		return g, fieldError(KindRegistration, "", ReasonFrameCount, "%d frames, want %d", len(frames), RegistrationFrames)
	}
	if !IsRegistration(frames) {
		return g, frameError(KindRegistration, 0, "room", ReasonNotRegistration, "%s, want %q", quote(frames[0]), RegistrationRoom)
	}
	r := frameReader{KindRegistration, frames}
	var err *Error
	if g.DecodeIP, err = r.text(1, "decode_ip"); err != nil {
		return g, err
	}
	if e := checkDecodeIP(KindRegistration, 1, g.DecodeIP); e != nil {
		return g, e
	}
	if g.DecodeStatusPort, err = r.port(2, "decode_status_port"); err != nil {
		return g, err
	}
	if g.SessionID, err = r.text(3, "session_id"); err != nil {
		return g, err
	}
	if g.KVPtrs, err = r.u64s(4, "kv_ptrs"); err != nil {
		return g, err
	}
	if len(frames[5]) != 0 {
		return g, frameError(KindRegistration, 5, "aux_ptrs", ReasonInvalidValue, "%d bytes; the aux pointer frame is always empty in v1", len(frames[5]))
	}
	if g.StatePtrs, err = r.u64s(6, "state_ptrs"); err != nil {
		return g, err
	}
	if len(frames[7]) != 0 {
		if g.DecodePrefixLen, err = r.intIn(7, "decode_prefix_len", 0, maxInt64); err != nil {
			return g, err
		}
	}
	return g, checkSessionID(KindRegistration, 3, g.SessionID)
}

// Validate reports what in g would not parse on the reference prefill (or
// would crash it later), as the *Error DecodeRegistration would return.
func (g *Registration) Validate() error {
	if err := checkText(KindRegistration, 1, "decode_ip", g.DecodeIP); err != nil {
		return err
	}
	if err := checkDecodeIP(KindRegistration, 1, g.DecodeIP); err != nil {
		return err
	}
	if err := checkPort(KindRegistration, 2, "decode_status_port", g.DecodeStatusPort); err != nil {
		return err
	}
	if err := checkText(KindRegistration, 3, "session_id", g.SessionID); err != nil {
		return err
	}
	if err := checkSessionID(KindRegistration, 3, g.SessionID); err != nil {
		return err
	}
	if g.DecodePrefixLen < 0 {
		return frameError(KindRegistration, 7, "decode_prefix_len", ReasonOutOfRange, "%d is negative", g.DecodePrefixLen)
	}
	return nil
}
