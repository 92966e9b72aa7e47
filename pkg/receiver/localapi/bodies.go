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
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MaxBodyBytes caps a request body: a request for a very long prompt
// carries a few hundred thousand page indices, well under this.
const MaxBodyBytes = 32 << 20

// WireV1 is the kind of registration and request the reference engine's
// v1 wire carries (docs/wire.md); it is the default when "kind" is absent.
// Other kinds have their own fields: a body is decoded by its kind.
const WireV1 = "v1"

// EngineBody is PUT /v1/engine (and the body of POST /v1/engine/stream).
type EngineBody struct {
	// Kind is the registration's wire (WireV1 when absent).
	Kind          string   `json:"kind,omitempty"`
	SessionID     *string  `json:"sessionId"`
	KVDataPtrs    []uint64 `json:"kvDataPtrs"`
	StateDataPtrs []uint64 `json:"stateDataPtrs"`
	// TPSize is the engine's tensor parallel size (optional): the agent
	// refuses a registration whose TP is not the decode layout the pod was
	// admitted under, or the plan's (409 DecodeLayoutMismatch).
	TPSize *int `json:"tpSize,omitempty"`
}

// EngineRegistered answers PUT /v1/engine.
type EngineRegistered struct {
	SessionID string `json:"sessionId"`
	// Registration numbers the registrations with different values the
	// agent process accepted (1 for the first).
	Registration uint64 `json:"registration"`
	// Replaced: the registration replaced one with other values; the rooms
	// of that one failed with EngineReregistered.
	Replaced bool `json:"replaced"`
}

// OpenBody is POST /v1/rooms.
type OpenBody struct {
	BootstrapAddr *string `json:"bootstrapAddr"`
	Room          *int64  `json:"room"`
}

// RequestBody is POST /v1/rooms/{room}/request (and a stream's request).
type RequestBody struct {
	// Kind is the request's wire (WireV1 when absent).
	Kind            string  `json:"kind,omitempty"`
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
	raw, release, err := readBody(r)
	if err != nil {
		return err
	}
	defer release()
	return decodeBytes(raw, v)
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

// bodyKind is the "kind" of a body, read before the body is decoded
// strictly as that kind.
type bodyKind struct {
	Kind string `json:"kind"`
}

// kindOf reads a JSON object's "kind" ("" when absent); what is not an
// object is left for the strict decoding to describe.
func kindOf(raw []byte) string {
	var k bodyKind
	if !bytes.Contains(raw, kindKey) || json.Unmarshal(raw, &k) != nil {
		return ""
	}
	return k.Kind
}

var kindKey = []byte(`"kind"`)

// unknownKind refuses a body of a kind this agent does not speak.
func unknownKind(what, kind string) error {
	return badBody("%s kind %q is not one this agent speaks (it speaks %q and %q)", what, kind, WireV1, WireContract)
}

// readBody reads a whole body, bounded by MaxBodyBytes, into a pooled
// buffer that release gives back.
func readBody(r io.Reader) (raw []byte, release func(), err error) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	release = func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, MaxBodyBytes+1)); err != nil {
		release()
		return nil, nil, badBody("reading the body: %v", err)
	}
	if buf.Len() > MaxBodyBytes {
		release()
		return nil, nil, &bodyError{tooLarge: true, msg: fmt.Sprintf("the body is longer than %d bytes", MaxBodyBytes)}
	}
	return buf.Bytes(), release, nil
}

// parseEngine checks PUT /v1/engine.
func parseEngine(r io.Reader) (receiver.EngineInfo, error) {
	raw, release, err := readBody(r)
	if err != nil {
		return receiver.EngineInfo{}, err
	}
	defer release()
	return parseEngineBytes(raw)
}

// parseEngineBytes checks a registration by its kind.
func parseEngineBytes(raw []byte) (receiver.EngineInfo, error) {
	switch k := kindOf(raw); k {
	case "", WireV1:
	case WireContract:
		return parseContractEngine(raw)
	default:
		return receiver.EngineInfo{}, unknownKind("registration", k)
	}
	var b EngineBody
	if err := decodeBytes(raw, &b); err != nil {
		return receiver.EngineInfo{}, err
	}
	if b.Kind != "" && b.Kind != WireV1 { // a key spelled with escapes
		return receiver.EngineInfo{}, unknownKind("registration", b.Kind)
	}
	if b.SessionID == nil {
		return receiver.EngineInfo{}, badBody(`"sessionId" is required ("host:port" of the transfer engine)`)
	}
	if b.KVDataPtrs == nil {
		return receiver.EngineInfo{}, badBody(`"kvDataPtrs" is required`)
	}
	tp, err := parseTPSize(b.TPSize)
	if err != nil {
		return receiver.EngineInfo{}, err
	}
	return receiver.EngineInfo{SessionID: *b.SessionID, KVDataPtrs: b.KVDataPtrs, StateDataPtrs: b.StateDataPtrs, TPSize: tp}, nil
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
	raw, release, err := readBody(r)
	if err != nil {
		return receiver.TransferRequest{}, err
	}
	defer release()
	req, err := parseRequestBytes(raw)
	if req.Manifest != nil { // a slice of the pooled body: the one copy the agent makes
		req.Manifest = bytes.Clone(req.Manifest)
	}
	return req, err
}

// parseRequestBytes checks a room's request by its kind. A contract
// request's manifest aliases raw.
func parseRequestBytes(raw []byte) (receiver.TransferRequest, error) {
	if req, ok := scanContractBody(raw); ok {
		return req, nil
	}
	switch k := kindOf(raw); k {
	case "", WireV1:
	case WireContract:
		return parseContractRequest(raw)
	default:
		return receiver.TransferRequest{}, unknownKind("request", k)
	}
	var b RequestBody
	if err := decodeBytes(raw, &b); err != nil {
		return receiver.TransferRequest{}, err
	}
	if b.Kind != "" && b.Kind != WireV1 {
		return receiver.TransferRequest{}, unknownKind("request", b.Kind)
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

// maxTPSize bounds "tpSize" (the planner's bound on any role's TP).
const maxTPSize = transferplan.MaxTPSize

// parseTPSize checks a registration's optional "tpSize" (0: not said).
func parseTPSize(tp *int) (int, error) {
	if tp == nil {
		return 0, nil
	}
	if *tp < 1 || *tp > maxTPSize {
		return 0, badBody(`"tpSize" is %d; it must be between 1 and %d (the engine's tensor parallel size), or absent`, *tp, maxTPSize)
	}
	return *tp, nil
}
