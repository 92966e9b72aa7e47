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
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// requestFrameNames are the wire names of a request's frames, for errors.
var requestFrameNames = [RequestFramesWithFragments]string{
	"room", "decode_ip", "decode_status_port", "session_id", "kv_indices",
	"aux_index", "required_dst_info_num", "decode_prefix_len", "mla_l1_5_flag",
	"page_transfer_mask", "page_local_indices", "mamba_indices",
	"fragments_version", "fragments",
}

// FragmentDecoder decodes the two fragment frames of a request; both empty
// mean none. DecodeFragments is the reference one.
type FragmentDecoder func(version, payload []byte) ([]transferplan.TransferFragment, error)

// DecodeRequest parses a request. It accepts 12 frames, or 14 with fragment
// frames; both fragment frames empty mean no fragments, as in the reference.
// Like the reference, frames 4 and 5 both empty mark a dummy; unlike it, a
// dummy that carries anything else is rejected (ReasonInconsistentDummy).
func DecodeRequest(frames [][]byte) (Request, error) {
	return DecodeRequestWith(frames, DecodeFragments)
}

// DecodeRequestWith is DecodeRequest with the fragment frames decoded by
// decodeFragments: a receiver of many requests carrying the same plan can
// remember decoded payloads instead of parsing the JSON again. Its errors
// are wrapped as ReasonInvalidFragments.
func DecodeRequestWith(frames [][]byte, decodeFragments FragmentDecoder) (Request, error) {
	var q Request
	if n := len(frames); n != RequestFrames && n != RequestFramesWithFragments {
		return q, kvwire.FieldError(kvwire.KindRequest, "", kvwire.ReasonFrameCount, "%d frames, want %d or %d", n, RequestFrames, RequestFramesWithFragments)
	}
	r := kvwire.FrameReader{Kind: kvwire.KindRequest, Frames: frames}
	if err := q.decodeHeader(r); err != nil {
		return q, err
	}
	if len(frames[4]) == 0 && len(frames[5]) == 0 {
		q.Dummy = true
		for i := 7; i < len(frames); i++ {
			if len(frames[i]) != 0 {
				return Request{}, kvwire.FrameError(kvwire.KindRequest, i, requestFrameNames[i], kvwire.ReasonInconsistentDummy, "a dummy request (frames 4 and 5 empty) carries %d bytes here", len(frames[i]))
			}
		}
		return q, nil
	}
	if err := q.decodePayload(r); err != nil {
		return Request{}, err
	}
	if len(frames) == RequestFramesWithFragments {
		frags, err := decodeFragments(frames[12], frames[13])
		if err != nil {
			return Request{}, &kvwire.Error{Kind: kvwire.KindRequest, Reason: kvwire.ReasonInvalidFragments, Frame: 12, Field: "fragments", Detail: err.Error(), Err: err}
		}
		q.Fragments = frags
	}
	if err := q.checkL15Pages(); err != nil {
		return Request{}, err
	}
	return q, nil
}

// decodeHeader reads the frames every request carries, dummy or not.
func (q *Request) decodeHeader(r kvwire.FrameReader) *kvwire.Error {
	var err *kvwire.Error
	if q.Room, err = r.Int64(0, "room"); err != nil {
		return err
	}
	if q.DecodeIP, err = r.Text(1, "decode_ip"); err != nil {
		return err
	}
	if e := kvwire.CheckDecodeIP(kvwire.KindRequest, 1, q.DecodeIP); e != nil {
		return kvwire.AsError(e)
	}
	if q.DecodeStatusPort, err = r.Port(2, "decode_status_port"); err != nil {
		return err
	}
	if q.SessionID, err = r.Text(3, "session_id"); err != nil {
		return err
	}
	if e := kvwire.CheckSessionID(kvwire.KindRequest, 3, q.SessionID); e != nil {
		return kvwire.AsError(e)
	}
	n, err := r.IntIn(6, "required_dst_info_num", 1, math.MaxInt32)
	q.RequiredDstInfoNum = int(n)
	return err
}

func (q *Request) decodePayload(r kvwire.FrameReader) *kvwire.Error {
	var err *kvwire.Error
	if q.KVIndices, err = r.I64s(4, "kv_indices"); err != nil {
		return err
	}
	if q.AuxIndex, err = r.IntIn(5, "aux_index", 0, math.MaxInt64); err != nil {
		return err
	}
	if q.DecodePrefixLen, err = r.IntIn(7, "decode_prefix_len", 0, math.MaxInt64); err != nil {
		return err
	}
	if q.MLAL15, err = r.Flag(8, "mla_l1_5_flag"); err != nil {
		return err
	}
	if q.PageTransferMask, err = r.Bools(9, "page_transfer_mask"); err != nil {
		return err
	}
	if q.PageLocalIndices, err = r.I64s(10, "page_local_indices"); err != nil {
		return err
	}
	q.MambaIndices, err = r.I64s(11, "mamba_indices")
	return err
}

// checkL15Pages: with the L1.5 flag set the reference prefill masks the kv
// indices with the page mask and gathers the local indices through the
// mask's running count, so both must line up or its numpy indexing raises.
func (q *Request) checkL15Pages() *kvwire.Error {
	if !q.MLAL15 {
		return nil
	}
	if len(q.PageTransferMask) != len(q.KVIndices) {
		return kvwire.FrameError(kvwire.KindRequest, 9, "page_transfer_mask", kvwire.ReasonInconsistentL15Pages,
			"%d mask entries for %d kv indices", len(q.PageTransferMask), len(q.KVIndices))
	}
	set := 0
	for _, b := range q.PageTransferMask {
		if b {
			set++
		}
	}
	if len(q.PageLocalIndices) != set {
		return kvwire.FrameError(kvwire.KindRequest, 10, "page_local_indices", kvwire.ReasonInconsistentL15Pages,
			"%d local indices for %d set mask entries", len(q.PageLocalIndices), set)
	}
	return nil
}

// Validate reports what in q would not parse on the reference prefill (or
// would crash it later), as the *Error DecodeRequest would return for it.
func (q *Request) Validate() error {
	checks := []error{
		kvwire.CheckText(kvwire.KindRequest, 1, "decode_ip", q.DecodeIP),
		kvwire.CheckDecodeIP(kvwire.KindRequest, 1, q.DecodeIP),
		kvwire.CheckPort(kvwire.KindRequest, 2, "decode_status_port", q.DecodeStatusPort),
		kvwire.CheckText(kvwire.KindRequest, 3, "session_id", q.SessionID),
		kvwire.CheckSessionID(kvwire.KindRequest, 3, q.SessionID),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	if q.RequiredDstInfoNum < 1 || q.RequiredDstInfoNum > math.MaxInt32 {
		return kvwire.FrameError(kvwire.KindRequest, 6, "required_dst_info_num", kvwire.ReasonOutOfRange, "%d is outside [1, %d]", q.RequiredDstInfoNum, math.MaxInt32)
	}
	if q.Dummy {
		return q.checkDummyEmpty()
	}
	if q.AuxIndex < 0 {
		return kvwire.FrameError(kvwire.KindRequest, 5, "aux_index", kvwire.ReasonOutOfRange, "%d is negative", q.AuxIndex)
	}
	if q.DecodePrefixLen < 0 {
		return kvwire.FrameError(kvwire.KindRequest, 7, "decode_prefix_len", kvwire.ReasonOutOfRange, "%d is negative", q.DecodePrefixLen)
	}
	if err := q.checkL15Pages(); err != nil {
		return err
	}
	return nil
}

// checkDummyEmpty catches a caller that filled a dummy's payload: the
// encoder would drop it silently.
func (q *Request) checkDummyEmpty() error {
	fields := []struct {
		frame int
		set   bool
	}{
		{4, len(q.KVIndices) > 0}, {5, q.AuxIndex != 0}, {7, q.DecodePrefixLen != 0}, {8, q.MLAL15},
		{9, len(q.PageTransferMask) > 0}, {10, len(q.PageLocalIndices) > 0}, {11, len(q.MambaIndices) > 0},
		{12, len(q.Fragments) > 0},
	}
	for _, f := range fields {
		if f.set {
			return kvwire.FrameError(kvwire.KindRequest, f.frame, requestFrameNames[f.frame], kvwire.ReasonInconsistentDummy, "a dummy request carries no payload")
		}
	}
	return nil
}
