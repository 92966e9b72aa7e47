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
	"encoding/binary"

	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// ContractRegistration tells a prefill rank where a decode rank's cache arena
// is and what it looks like, on the cache-contract wire. It is sent once per
// (bootstrap address, DP group, target set) to every target, dummies too:
//
//	["None", decode_ip, decode_status_port, session_id,
//	 arena pointer (u64 LE, 8 bytes), contract (JSON),
//	 decode_tp_size, decode_tp_rank]
//
// The prefill re-plans the pair from the contract and the TP coordinates;
// nothing of the plan travels.
type ContractRegistration struct {
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
func (c *ContractRegistration) Frames() [][]byte {
	buf := make([]byte, 0, len(RegistrationRoom)+len(c.DecodeIP)+len(c.SessionID)+8+3*20)
	var ends [5]int
	buf = append(buf, RegistrationRoom...)
	ends[0] = len(buf)
	buf = append(buf, c.DecodeIP...)
	ends[1] = len(buf)
	buf = appendDecimal(buf, int64(c.DecodeStatusPort))
	ends[2] = len(buf)
	buf = append(buf, c.SessionID...)
	ends[3] = len(buf)
	buf = binary.LittleEndian.AppendUint64(buf, c.ArenaPtr)
	ends[4] = len(buf)
	buf = appendDecimal(buf, int64(c.DecodeTPSize))
	sizeEnd := len(buf)
	buf = appendDecimal(buf, int64(c.DecodeTPRank))
	frames := sliceFrames(make([][]byte, 0, RegistrationFrames), buf, ends[:])
	return append(frames, c.Contract, buf[ends[4]:sizeEnd:sizeEnd], buf[sizeEnd:len(buf):len(buf)])
}

// DecodeContractRegistrationRoute reads frames 0–3 of a registration as the
// engine's route_header_from_zmq does: eight frames, "None", then decode_ip
// (at most 255 bytes), session (at most 512) and a canonical port.
func DecodeContractRegistrationRoute(frames [][]byte) (RegistrationRoute, error) {
	const kind = KindContractRegistration
	var g RegistrationRoute
	if len(frames) != RegistrationFrames {
		return g, fieldError(kind, "", ReasonFrameCount, "%d frames, want %d", len(frames), RegistrationFrames)
	}
	if !IsRegistration(frames) {
		return g, frameError(kind, 0, "room", ReasonNotRegistration, "%s, want %q", quote(frames[0]), RegistrationRoom)
	}
	r := frameReader{kind, frames}
	var err *Error
	if g.DecodeIP, err = r.boundedText(1, "decode_ip", MaxContractEndpointBytes); err != nil {
		return g, err
	}
	if e := checkDecodeIP(kind, 1, g.DecodeIP); e != nil {
		return g, e
	}
	if g.SessionID, err = r.boundedText(3, "session_id", MaxContractSessionBytes); err != nil {
		return g, err
	}
	if e := checkSessionID(kind, 3, g.SessionID); e != nil {
		return g, e
	}
	port, err := r.canonicalUint(2, "decode_status_port", 1, 65535)
	if err != nil {
		return g, err
	}
	g.DecodeStatusPort = int(port)
	return g, nil
}

// DecodeContractRegistration parses a registration of the cache-contract
// wire as the engine's KVArgsRegisterInfo.from_zmq does, in its order. The
// contract frame gets CheckContractEnvelope; whether the contract itself is
// valid, and whether the pair plans, is for pkg/transferplan.
func DecodeContractRegistration(frames [][]byte) (ContractRegistration, error) {
	const kind = KindContractRegistration
	route, err := DecodeContractRegistrationRoute(frames)
	if err != nil {
		return ContractRegistration{}, err
	}
	c := ContractRegistration{DecodeIP: route.DecodeIP, DecodeStatusPort: route.DecodeStatusPort, SessionID: route.SessionID}
	if n := len(frames[4]); n != 8 {
		return ContractRegistration{}, frameError(kind, 4, "arena_ptr", ReasonInvalidValue, "%d bytes; the arena pointer is exactly 8", n)
	}
	if e := CheckContractEnvelope(frames[5]); e != nil {
		ce := asError(e)
		ce.Kind, ce.Frame, ce.Field = kind, 5, "cache_layout"
		return ContractRegistration{}, ce
	}
	c.Contract = frames[5]
	r := frameReader{kind, frames}
	size, ferr := r.canonicalUint(6, "decode_tp_size", 1, plancontract.MaxTPSize)
	if ferr != nil {
		return ContractRegistration{}, ferr
	}
	rank, ferr := r.canonicalUint(7, "decode_tp_rank", 0, size-1)
	if ferr != nil {
		return ContractRegistration{}, ferr
	}
	c.DecodeTPSize, c.DecodeTPRank = int(size), int(rank)
	if c.ArenaPtr = binary.LittleEndian.Uint64(frames[4]); c.ArenaPtr == 0 {
		return ContractRegistration{}, frameError(kind, 4, "arena_ptr", ReasonInvalidValue, "the arena pointer is 0")
	}
	return c, nil
}

// Validate reports what in c the engine's prefill would refuse, as the
// *Error DecodeContractRegistration would return.
func (c *ContractRegistration) Validate() error {
	const kind = KindContractRegistration
	if err := checkBoundedText(kind, 1, "decode_ip", c.DecodeIP, MaxContractEndpointBytes); err != nil {
		return err
	}
	if err := checkDecodeIP(kind, 1, c.DecodeIP); err != nil {
		return err
	}
	if err := checkBoundedText(kind, 3, "session_id", c.SessionID, MaxContractSessionBytes); err != nil {
		return err
	}
	if err := checkSessionID(kind, 3, c.SessionID); err != nil {
		return err
	}
	if err := checkPort(kind, 2, "decode_status_port", c.DecodeStatusPort); err != nil {
		return err
	}
	if c.ArenaPtr == 0 {
		return frameError(kind, 4, "arena_ptr", ReasonInvalidValue, "the arena pointer is 0")
	}
	if err := CheckContractEnvelope(c.Contract); err != nil {
		ce := asError(err)
		ce.Kind, ce.Frame, ce.Field = kind, 5, "cache_layout"
		return ce
	}
	if c.DecodeTPSize < 1 || c.DecodeTPSize > plancontract.MaxTPSize {
		return frameError(kind, 6, "decode_tp_size", ReasonOutOfRange, "%d is outside [1, %d]", c.DecodeTPSize, plancontract.MaxTPSize)
	}
	if c.DecodeTPRank < 0 || c.DecodeTPRank >= c.DecodeTPSize {
		return frameError(kind, 7, "decode_tp_rank", ReasonOutOfRange, "%d is outside [0, %d]", c.DecodeTPRank, c.DecodeTPSize-1)
	}
	return nil
}

func checkBoundedText(kind MessageKind, frame int, field, s string, limit int) error {
	if len(s) > limit {
		return frameError(kind, frame, field, ReasonOutOfRange, "%d bytes; the engine takes at most %d", len(s), limit)
	}
	return checkText(kind, frame, field, s)
}
