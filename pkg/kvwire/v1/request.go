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
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

const (
	// RequestFrames is the number of frames of a request without fragments.
	RequestFrames = 12
	// RequestFramesWithFragments adds the version and JSON fragment frames.
	RequestFramesWithFragments = 14
)

// Request asks a prefill rank to fill a room's pages. It is sent once per
// room to every target of the decode rank's plan:
//
//	[room, decode_ip, decode_status_port, session_id, kv_indices (i64 LE),
//	 aux_index, required_dst_info_num, decode_prefix_len, mla_l1_5_flag,
//	 page_transfer_mask (bool bytes), page_local_indices (i64 LE),
//	 mamba_indices (i64 LE)] + optional ["1", fragments JSON]
//
// A dummy request (frames 4, 5 and 7–11 empty, no fragments) tells a prefill
// rank of the room's target set that this decode rank takes nothing from it.
type Request struct {
	Room             int64
	DecodeIP         string
	DecodeStatusPort int
	SessionID        string
	// RequiredDstInfoNum is how many decode ranks' requests this prefill rank
	// collects for the room before it starts sending (the reference's
	// required_dst_info_num); dummies count too.
	RequiredDstInfoNum int
	Dummy              bool

	// The payload. A dummy carries none of it: encoders ignore these fields
	// when Dummy is set, and decoders leave them zero.
	KVIndices       []int64
	AuxIndex        int64
	DecodePrefixLen int64
	// MLAL15 is the decode side's MLA L1.5 flag; when set, PageTransferMask
	// has one entry per kv index and PageLocalIndices one per set entry.
	MLAL15           bool
	PageTransferMask []bool
	PageLocalIndices []int64
	// MambaIndices is nil when the request carries no state slots.
	MambaIndices []int64
	// Fragments is what a decoder found in frames 12–13 (nil when absent),
	// and what Frames encodes there. AppendFrames does not read it.
	Fragments []transferplan.TransferFragment
}

// Frames encodes the request, fragments included.
func (q *Request) Frames() [][]byte {
	var ff FragmentFrames
	if !q.Dummy {
		ff = EncodeFragmentFrames(q.Fragments)
	}
	return q.AppendFrames(make([][]byte, 0, RequestFramesWithFragments), ff)
}

// AppendFrames appends the request's frames to dst, followed by fragments
// when they are non-empty and the request is not a dummy. q.Fragments is not
// read: pass the target's pre-encoded frames. The frames share one backing
// array; the fragment frames are appended as given, not copied.
func (q *Request) AppendFrames(dst [][]byte, fragments FragmentFrames) [][]byte {
	size := 3*20 + len(q.DecodeIP) + len(q.SessionID)
	if !q.Dummy {
		size += 3*20 + 1 + 8*(len(q.KVIndices)+len(q.PageLocalIndices)+len(q.MambaIndices)) + len(q.PageTransferMask)
	}
	buf := make([]byte, 0, size)
	var ends [RequestFrames]int
	buf = kvwire.AppendDecimal(buf, q.Room)
	ends[0] = len(buf)
	buf = append(buf, q.DecodeIP...)
	ends[1] = len(buf)
	buf = kvwire.AppendDecimal(buf, int64(q.DecodeStatusPort))
	ends[2] = len(buf)
	buf = append(buf, q.SessionID...)
	ends[3] = len(buf)
	if q.Dummy {
		ends[4], ends[5] = len(buf), len(buf)
		buf = kvwire.AppendDecimal(buf, int64(q.RequiredDstInfoNum))
		for i := 6; i < RequestFrames; i++ {
			ends[i] = len(buf)
		}
		return kvwire.SliceFrames(dst, buf, ends[:])
	}
	buf = kvwire.AppendI64s(buf, q.KVIndices)
	ends[4] = len(buf)
	buf = kvwire.AppendDecimal(buf, q.AuxIndex)
	ends[5] = len(buf)
	buf = kvwire.AppendDecimal(buf, int64(q.RequiredDstInfoNum))
	ends[6] = len(buf)
	buf = kvwire.AppendDecimal(buf, q.DecodePrefixLen)
	ends[7] = len(buf)
	if q.MLAL15 {
		buf = append(buf, '1')
	} else {
		buf = append(buf, '0')
	}
	ends[8] = len(buf)
	buf = kvwire.AppendBools(buf, q.PageTransferMask)
	ends[9] = len(buf)
	buf = kvwire.AppendI64s(buf, q.PageLocalIndices)
	ends[10] = len(buf)
	buf = kvwire.AppendI64s(buf, q.MambaIndices)
	ends[11] = len(buf)
	dst = kvwire.SliceFrames(dst, buf, ends[:])
	if !fragments.Empty() {
		dst = append(dst, fragments.Version, fragments.Payload)
	}
	return dst
}
