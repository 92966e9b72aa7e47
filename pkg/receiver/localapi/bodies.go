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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// MaxBodyBytes caps a request body: a request for a very long prompt
// carries a few hundred thousand page indices, well under this.
const MaxBodyBytes = 32 << 20

// EngineBody is PUT /v1/engine.
type EngineBody struct {
	SessionID     *string  `json:"sessionId"`
	KVDataPtrs    []uint64 `json:"kvDataPtrs"`
	StateDataPtrs []uint64 `json:"stateDataPtrs"`
}

// OpenBody is POST /v1/rooms.
type OpenBody struct {
	BootstrapAddr *string `json:"bootstrapAddr"`
	Room          *int64  `json:"room"`
}

// RequestBody is POST /v1/rooms/{room}/request.
type RequestBody struct {
	KVIndices       []int64 `json:"kvIndices"`
	AuxIndex        *int64  `json:"auxIndex"`
	DecodePrefixLen *int64  `json:"decodePrefixLen"`
	MambaIndices    []int64 `json:"mambaIndices"`
}

// RoomBody is the answer of GET /v1/rooms/{room} (and of open/request).
type RoomBody struct {
	Room             int64   `json:"room"`
	Status           string  `json:"status"`
	BootstrapToken   int64   `json:"bootstrapToken"`
	SpecCandidateIDs []int32 `json:"specCandidateIds"`
	// FailureCode is the stable code of a failed room (a
	// receiver.FailureReason); FailureMessage the sentence naming the
	// address, ranks and numbers involved. Both are null unless Failed.
	FailureCode    *string `json:"failureCode"`
	FailureMessage *string `json:"failureMessage"`
}

// bodyError is a body the API cannot use; it becomes a 400 (or 413).
type bodyError struct {
	tooLarge bool
	msg      string
}

func (e *bodyError) Error() string { return e.msg }

func badBody(format string, args ...any) error { return &bodyError{msg: fmt.Sprintf(format, args...)} }

// bodyBuffers recycles request body buffers: bodies are read whole before
// decoding, and most are a few hundred bytes.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps the buffers of huge bodies out of the pool.
const maxPooledBuffer = 64 << 10

// decodeStrict reads exactly one JSON object with only known fields.
func decodeStrict(r io.Reader, v any) error {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(io.LimitReader(r, MaxBodyBytes+1)); err != nil {
		return badBody("reading the body: %v", err)
	}
	if buf.Len() > MaxBodyBytes {
		return &bodyError{tooLarge: true, msg: fmt.Sprintf("the body is longer than %d bytes", MaxBodyBytes)}
	}
	return decodeBytes(buf.Bytes(), v)
}

func decodeBytes(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badBody("the body is not the expected JSON object: %s", describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badBody("the body has data after its JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("field %q must be %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	}
	return err.Error()
}

// parseEngine checks PUT /v1/engine.
func parseEngine(r io.Reader) (receiver.EngineInfo, error) {
	var b EngineBody
	if err := decodeStrict(r, &b); err != nil {
		return receiver.EngineInfo{}, err
	}
	if b.SessionID == nil {
		return receiver.EngineInfo{}, badBody(`"sessionId" is required ("host:port" of the transfer engine)`)
	}
	if b.KVDataPtrs == nil {
		return receiver.EngineInfo{}, badBody(`"kvDataPtrs" is required`)
	}
	return receiver.EngineInfo{SessionID: *b.SessionID, KVDataPtrs: b.KVDataPtrs, StateDataPtrs: b.StateDataPtrs}, nil
}

// parseOpen checks POST /v1/rooms.
func parseOpen(r io.Reader) (string, int64, error) {
	var b OpenBody
	if err := decodeStrict(r, &b); err != nil {
		return "", 0, err
	}
	if b.BootstrapAddr == nil || b.Room == nil {
		return "", 0, badBody(`"bootstrapAddr" and "room" are required`)
	}
	if *b.Room < 0 {
		return "", 0, badBody(`"room" is %d; rooms are non-negative`, *b.Room)
	}
	return *b.BootstrapAddr, *b.Room, nil
}

// parseRequest checks POST /v1/rooms/{room}/request.
func parseRequest(r io.Reader) (receiver.TransferRequest, error) {
	var b RequestBody
	if err := decodeStrict(r, &b); err != nil {
		return receiver.TransferRequest{}, err
	}
	if b.KVIndices == nil || b.AuxIndex == nil {
		return receiver.TransferRequest{}, badBody(`"kvIndices" and "auxIndex" are required`)
	}
	req := receiver.TransferRequest{KVIndices: b.KVIndices, AuxIndex: *b.AuxIndex, MambaIndices: b.MambaIndices}
	if b.DecodePrefixLen != nil {
		req.DecodePrefixLen = *b.DecodePrefixLen
	}
	return req, nil
}

// MaxWait bounds a long poll (GET /v1/rooms/{room}?wait=...).
const MaxWait = time.Minute

// parseWait reads the wait query parameter ("" means do not wait).
func parseWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxWait {
		return 0, badBody("wait=%q is not a duration between 0 and %v (e.g. wait=2s)", s, MaxWait)
	}
	return d, nil
}

// parseRoom reads the {room} path segment.
func parseRoom(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, badBody("room %q in the path is not a non-negative integer", s)
	}
	return n, nil
}

func roomBody(st receiver.RoomStatus) RoomBody {
	b := RoomBody{Room: st.Room, Status: st.Status.String(), BootstrapToken: st.BootstrapToken, SpecCandidateIDs: st.SpecCandidateIDs}
	if st.Failure != nil {
		msg, code := st.Failure.Message, string(st.Failure.Reason)
		b.FailureMessage, b.FailureCode = &msg, &code
	}
	return b
}
