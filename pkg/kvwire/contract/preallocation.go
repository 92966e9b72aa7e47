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
	"math"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// PreAllocationFrames is the number of frames of a pre-allocation.
const PreAllocationFrames = 3

// PreAllocation asks a prefill rank to fill one room's blocks, on the
// cache-contract wire. It is sent once per room to every target:
//
//	[room, session_id, manifest]
//
// where manifest is the room's block manifest for the targets that move
// data and empty for the dummy (rendezvous-only) ones, as the engine sends.
type PreAllocation struct {
	Room      int64
	SessionID string
	// Manifest is the manifest's wire bytes, or empty for a dummy target.
	// Frames sends it as it is; decoders return a slice of the frame.
	Manifest []byte
}

// Dummy reports whether the pre-allocation carries no manifest.
func (p *PreAllocation) Dummy() bool { return len(p.Manifest) == 0 }

// Frames encodes the pre-allocation: the room and session frames share one
// small buffer, the manifest frame is p.Manifest itself. Sending one
// manifest to many targets costs no copy and no re-encoding of it.
func (p *PreAllocation) Frames() [][]byte {
	return p.AppendFrames(make([][]byte, 0, PreAllocationFrames))
}

// AppendFrames appends the three frames to dst.
func (p *PreAllocation) AppendFrames(dst [][]byte) [][]byte {
	buf := make([]byte, 0, 20+len(p.SessionID))
	buf = kvwire.AppendDecimal(buf, p.Room)
	room := len(buf)
	buf = append(buf, p.SessionID...)
	return append(dst, buf[:room:room], buf[room:], p.Manifest)
}

// DecodePreAllocationRoute reads frames 0 and 1 of a pre-allocation as the
// engine's route_header_from_zmq does: three frames, a canonical room in
// [0, 2^63-1], a session of at most 512 bytes (host:port). The engine reads
// them first, to fail the room of a pre-allocation it then refuses. The
// result has no manifest.
func DecodePreAllocationRoute(frames [][]byte) (PreAllocation, error) {
	const kind = kvwire.KindPreAllocation
	if len(frames) != PreAllocationFrames {
		return PreAllocation{}, kvwire.FieldError(kind, "", kvwire.ReasonFrameCount, "%d frames, want %d", len(frames), PreAllocationFrames)
	}
	r := kvwire.FrameReader{Kind: kind, Frames: frames}
	room, err := r.CanonicalUint(0, "room", 0, math.MaxInt64)
	if err != nil {
		return PreAllocation{}, err
	}
	session, err := r.BoundedText(1, "session_id", MaxSessionBytes)
	if err != nil {
		return PreAllocation{}, err
	}
	if e := kvwire.CheckSessionID(kind, 1, session); e != nil {
		return PreAllocation{}, e
	}
	return PreAllocation{Room: room, SessionID: session}, nil
}

// DecodePreAllocation parses a pre-allocation as the engine's
// TransferInfo.from_zmq does: the route (DecodePreAllocationRoute), then a
// manifest that parses (DecodeManifest's rules) unless the frame is empty.
// Whether the manifest fits the decode rank's contract is
// ValidateManifest's call, against the contract that session registered.
func DecodePreAllocation(frames [][]byte) (PreAllocation, error) {
	p, err := DecodePreAllocationRoute(frames)
	if err != nil {
		return PreAllocation{}, err
	}
	if len(frames[2]) > 0 {
		s := manifestScan{raw: frames[2], keep: 0}
		if e := s.run(); e != nil {
			me := kvwire.AsError(e)
			return PreAllocation{}, &kvwire.Error{Kind: kvwire.KindPreAllocation, Reason: me.Reason, Frame: 2, Field: joinField("manifest", me.Field), Detail: me.Detail, Err: e}
		}
		p.Manifest = frames[2]
	}
	return p, nil
}

// Validate reports what in p the engine's prefill would refuse before it
// looks at the manifest, as the *Error DecodePreAllocation would return.
func (p *PreAllocation) Validate() error {
	const kind = kvwire.KindPreAllocation
	if p.Room < 0 {
		return kvwire.FrameError(kind, 0, "room", kvwire.ReasonOutOfRange, "%d is negative", p.Room)
	}
	if err := checkBoundedText(kind, 1, "session_id", p.SessionID, MaxSessionBytes); err != nil {
		return err
	}
	if err := kvwire.CheckSessionID(kind, 1, p.SessionID); err != nil {
		return err
	}
	if len(p.Manifest) > MaxManifestBytes {
		return kvwire.FrameError(kind, 2, "manifest", kvwire.ReasonPayloadSize, "%d bytes; a manifest is at most %d", len(p.Manifest), MaxManifestBytes)
	}
	return nil
}

func joinField(outer, inner string) string {
	if inner == "" {
		return outer
	}
	return outer + "." + inner
}
