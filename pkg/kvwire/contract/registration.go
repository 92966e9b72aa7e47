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

	"encoding/binary"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Registration tells a prefill rank where a decode rank's cache arena
// is and what it looks like, on the cache-contract wire. It is sent once per
// (bootstrap address, DP group, target set) to every target, dummies too:
//
//	["None", decode_ip, decode_status_port, session_id,
//	 arena pointer (u64 LE, 8 bytes), contract (JSON),
//	 decode_tp_size, decode_tp_rank]
//
// The prefill re-plans the pair from the contract and the TP coordinates;
// nothing of the plan travels.
type Registration struct {
	// DecodeIP and DecodeStatusPort are where the decode rank's status PULL
	// socket listens.
	DecodeIP         string
	DecodeStatusPort int
	// SessionID is the decode rank's transfer-engine session, "host:port".
	SessionID string
	// ArenaPtr is the address of the decode rank's cache arena; never 0.
	ArenaPtr uint64
	// Contract is the decode rank's cache contract, wire JSON. Frames sends
	// these bytes as they are; decoders return a slice of the frame.
	Contract     []byte
	DecodeTPSize int
	DecodeTPRank int
}

// RegistrationRoute is what a prefill rank reads of a registration before
// anything else: where to answer, and for which session. The engine reads it
// even from a registration it then rejects, to fail that session's rooms.
type RegistrationRoute struct {
	DecodeIP         string
	DecodeStatusPort int
	SessionID        string
}

// Frames encodes the registration. The contract frame is c.Contract itself,
// not a copy.
func (c *Registration) Frames() [][]byte {
	buf := make([]byte, 0, len(kvwire.RegistrationRoom)+len(c.DecodeIP)+len(c.SessionID)+8+3*20)
	var ends [5]int
	buf = append(buf, kvwire.RegistrationRoom...)
	ends[0] = len(buf)
	buf = append(buf, c.DecodeIP...)
	ends[1] = len(buf)
	buf = kvwire.AppendDecimal(buf, int64(c.DecodeStatusPort))
	ends[2] = len(buf)
	buf = append(buf, c.SessionID...)
	ends[3] = len(buf)
	buf = binary.LittleEndian.AppendUint64(buf, c.ArenaPtr)
	ends[4] = len(buf)
	buf = kvwire.AppendDecimal(buf, int64(c.DecodeTPSize))
	sizeEnd := len(buf)
	buf = kvwire.AppendDecimal(buf, int64(c.DecodeTPRank))
	frames := kvwire.SliceFrames(make([][]byte, 0, kvwire.RegistrationFrames), buf, ends[:])
	return append(frames, c.Contract, buf[ends[4]:sizeEnd:sizeEnd], buf[sizeEnd:len(buf):len(buf)])
}

// DecodeRegistrationRoute reads frames 0–3 of a registration as the
// engine's route_header_from_zmq does: eight frames, "None", then decode_ip
// (at most 255 bytes), session (at most 512) and a canonical port.
func DecodeRegistrationRoute(frames [][]byte) (RegistrationRoute, error) {
	const kind = kvwire.KindContractRegistration
	var g RegistrationRoute
	if len(frames) != kvwire.RegistrationFrames {
		return g, kvwire.FieldError(kind, "", kvwire.ReasonFrameCount, "%d frames, want %d", len(frames), kvwire.RegistrationFrames)
	}
	if !kvwire.IsRegistration(frames) {
		return g, kvwire.FrameError(kind, 0, "room", kvwire.ReasonNotRegistration, "%s, want %q", kvwire.Quote(frames[0]), kvwire.RegistrationRoom)
	}
	r := kvwire.FrameReader{Kind: kind, Frames: frames}
	var err *kvwire.Error
	if g.DecodeIP, err = r.BoundedText(1, "decode_ip", MaxEndpointBytes); err != nil {
		return g, err
	}
	if e := kvwire.CheckDecodeIP(kind, 1, g.DecodeIP); e != nil {
		return g, e
	}
	if g.SessionID, err = r.BoundedText(3, "session_id", MaxSessionBytes); err != nil {
		return g, err
	}
	if e := kvwire.CheckSessionID(kind, 3, g.SessionID); e != nil {
		return g, e
	}
	port, err := r.CanonicalUint(2, "decode_status_port", 1, 65535)
	if err != nil {
		return g, err
	}
	g.DecodeStatusPort = int(port)
	return g, nil
}

// DecodeRegistration parses a registration of the cache-contract
// wire as the engine's KVArgsRegisterInfo.from_zmq does, in its order. The
// contract frame gets CheckEnvelope; whether the contract itself is
// valid, and whether the pair plans, is for pkg/transferplan.
func DecodeRegistration(frames [][]byte) (Registration, error) {
	const kind = kvwire.KindContractRegistration
	route, err := DecodeRegistrationRoute(frames)
	if err != nil {
		return Registration{}, err
	}
	c := Registration{DecodeIP: route.DecodeIP, DecodeStatusPort: route.DecodeStatusPort, SessionID: route.SessionID}
	if n := len(frames[4]); n != 8 {
		return Registration{}, kvwire.FrameError(kind, 4, "arena_ptr", kvwire.ReasonInvalidValue, "%d bytes; the arena pointer is exactly 8", n)
	}
	if e := CheckEnvelope(frames[5]); e != nil {
		ce := kvwire.AsError(e)
		ce.Kind, ce.Frame, ce.Field = kind, 5, "cache_layout"
		return Registration{}, ce
	}
	c.Contract = frames[5]
	r := kvwire.FrameReader{Kind: kind, Frames: frames}
	size, ferr := r.CanonicalUint(6, "decode_tp_size", 1, plancontract.MaxTPSize)
	if ferr != nil {
		return Registration{}, ferr
	}
	rank, ferr := r.CanonicalUint(7, "decode_tp_rank", 0, size-1)
	if ferr != nil {
		return Registration{}, ferr
	}
	c.DecodeTPSize, c.DecodeTPRank = int(size), int(rank)
	if c.ArenaPtr = binary.LittleEndian.Uint64(frames[4]); c.ArenaPtr == 0 {
		return Registration{}, kvwire.FrameError(kind, 4, "arena_ptr", kvwire.ReasonInvalidValue, "the arena pointer is 0")
	}
	return c, nil
}

// Validate reports what in c the engine's prefill would refuse, as the
// *Error DecodeRegistration would return.
func (c *Registration) Validate() error {
	const kind = kvwire.KindContractRegistration
	if err := checkBoundedText(kind, 1, "decode_ip", c.DecodeIP, MaxEndpointBytes); err != nil {
		return err
	}
	if err := kvwire.CheckDecodeIP(kind, 1, c.DecodeIP); err != nil {
		return err
	}
	if err := checkBoundedText(kind, 3, "session_id", c.SessionID, MaxSessionBytes); err != nil {
		return err
	}
	if err := kvwire.CheckSessionID(kind, 3, c.SessionID); err != nil {
		return err
	}
	if err := kvwire.CheckPort(kind, 2, "decode_status_port", c.DecodeStatusPort); err != nil {
		return err
	}
	if c.ArenaPtr == 0 {
		return kvwire.FrameError(kind, 4, "arena_ptr", kvwire.ReasonInvalidValue, "the arena pointer is 0")
	}
	if err := CheckEnvelope(c.Contract); err != nil {
		ce := kvwire.AsError(err)
		ce.Kind, ce.Frame, ce.Field = kind, 5, "cache_layout"
		return ce
	}
	if c.DecodeTPSize < 1 || c.DecodeTPSize > plancontract.MaxTPSize {
		return kvwire.FrameError(kind, 6, "decode_tp_size", kvwire.ReasonOutOfRange, "%d is outside [1, %d]", c.DecodeTPSize, plancontract.MaxTPSize)
	}
	if c.DecodeTPRank < 0 || c.DecodeTPRank >= c.DecodeTPSize {
		return kvwire.FrameError(kind, 7, "decode_tp_rank", kvwire.ReasonOutOfRange, "%d is outside [0, %d]", c.DecodeTPRank, c.DecodeTPSize-1)
	}
	return nil
}

func checkBoundedText(kind kvwire.MessageKind, frame int, field, s string, limit int) error {
	if len(s) > limit {
		return kvwire.FrameError(kind, frame, field, kvwire.ReasonOutOfRange, "%d bytes; the engine takes at most %d", len(s), limit)
	}
	return kvwire.CheckText(kind, frame, field, s)
}
