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
	"strconv"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// The engine stream (POST /v1/engine/stream, docs/receiver-agent.md): after
// the upgrade both directions carry newline-delimited JSON objects, one per
// line. The engine sends operations ("op"), the agent sends events ("ev").
const (
	// StreamProtocol is the Upgrade token of the stream.
	StreamProtocol = "pdtopo-stream.v1"
	// MaxStreamLine bounds one line in either direction: an operation
	// carries at most a request body.
	MaxStreamLine = MaxBodyBytes + 4096
)

// Operations, the engine's lines.
const (
	OpOpen    = "open"
	OpRequest = "request"
	OpClear   = "clear"
)

// Events, the agent's lines.
const (
	EvHello   = "hello"
	EvRoom    = "room"
	EvRefused = "refused"
	EvResync  = "resync"
	EvClosed  = "closed"
)

// StreamOp is one operation line. Room is required; Ref (open) is the
// engine's own number for this opening of the room, echoed in the room's
// events; BootstrapAddr is open's; Request is request's body, exactly what
// POST /v1/rooms/{room}/request takes (decoded by its "kind").
type StreamOp struct {
	Op            string          `json:"op"`
	Room          *int64          `json:"room"`
	Ref           int64           `json:"ref,omitempty"`
	BootstrapAddr *string         `json:"bootstrapAddr,omitempty"`
	Request       json.RawMessage `json:"request,omitempty"`

	// parsed is Request already checked, when scanOp decoded the line.
	parsed *receiver.TransferRequest
}

// OpError is an operation line the agent cannot use. With Room set it is
// a refusal of that room's operation (the engine fails the room); without,
// the line is not the protocol and the agent closes the stream.
type OpError struct {
	Op   string
	Room *int64
	Ref  int64
	Err  error
}

func (e *OpError) Error() string {
	if e.Room == nil {
		return "not a stream operation: " + e.Err.Error()
	}
	return fmt.Sprintf("%s of room %d: %v", e.Op, *e.Room, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// DecodeOp decodes and checks one operation line (without its newline).
// The lines the clients write take scanOp's path; anything else is decoded
// by encoding/json, which describes what is wrong.
func DecodeOp(line []byte) (StreamOp, error) {
	if op, req, ok := scanOp(line); ok {
		op.parsed = req
		return op, nil
	}
	return decodeOpJSON(line)
}

// decodeOpJSON is DecodeOp by encoding/json.
func decodeOpJSON(line []byte) (StreamOp, error) {
	var op StreamOp
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(&op)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if op.Room == nil || !knownOp(op.Op) {
		if err == nil {
			err = fmt.Errorf(`"op" must be one of open, request, clear and "room" an integer; got op %q`, op.Op)
		}
		return op, &OpError{Op: op.Op, Err: badBody("%s", describeJSONError(err))}
	}
	refuse := func(format string, args ...any) error {
		return &OpError{Op: op.Op, Room: op.Room, Ref: op.Ref, Err: badBody(format, args...)}
	}
	switch {
	case err != nil:
		return op, refuse("the line is not the expected JSON object: %s", describeJSONError(err))
	case *op.Room < 0:
		return op, refuse(`"room" is %d; rooms are non-negative`, *op.Room)
	case op.Op == OpOpen && op.BootstrapAddr == nil:
		return op, refuse(`open needs "bootstrapAddr"`)
	case op.Op == OpRequest && len(op.Request) == 0:
		return op, refuse(`request needs "request" (the body of POST /v1/rooms/{room}/request)`)
	}
	return op, nil
}

func knownOp(op string) bool { return op == OpOpen || op == OpRequest || op == OpClear }

// AppendRoomEvent appends a room event line: the room's body (as GET
// /v1/rooms/{room} answers it) with "ev" and the engine's "ref".
func AppendRoomEvent(b []byte, ev receiver.RoomEvent) []byte {
	b = append(b, `{"ev":"room","ref":`...)
	b = strconv.AppendInt(b, ev.Ref, 10)
	b = append(b, ',')
	return appendRoomFields(b, ev.RoomStatus)
}

// AppendRefused appends the refusal of an operation: the HTTP status, code
// and message the HTTP API answers the same call with.
func AppendRefused(b []byte, op string, room *int64, ref int64, httpStatus int, code, message string) []byte {
	b = append(b, `{"ev":"refused","op":`...)
	b = appendJSONString(b, op)
	b = append(b, `,"room":`...)
	if room == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *room, 10)
	}
	b = append(b, `,"ref":`...)
	b = strconv.AppendInt(b, ref, 10)
	b = append(b, `,"httpStatus":`...)
	b = strconv.AppendInt(b, int64(httpStatus), 10)
	return appendCodeMessage(b, code, message)
}

// AppendClosed appends the last line of a stream the agent ends.
func AppendClosed(b []byte, code, message string) []byte {
	b = append(b, `{"ev":"closed"`...)
	return appendCodeMessage(b, code, message)
}

// AppendResync appends the line announcing the state of every open room of
// the stream, one room event each, after the agent dropped events.
func AppendResync(b []byte, rooms int) []byte {
	b = append(b, `{"ev":"resync","rooms":`...)
	b = strconv.AppendInt(b, int64(rooms), 10)
	return append(b, '}', '\n')
}

// Hello is the first line of a stream: the registration it made.
type Hello struct {
	Ev           string `json:"ev"`
	Protocol     int    `json:"protocol"`
	EngineRank   int    `json:"engineRank"`
	SessionID    string `json:"sessionId"`
	Registration uint64 `json:"registration"`
	Replaced     bool   `json:"replaced"`
}

func appendCodeMessage(b []byte, code, message string) []byte {
	b = append(b, `,"code":`...)
	b = appendJSONString(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, message)
	return append(b, '}', '\n')
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// StreamEvent is one event line as a client decodes it: the fields of
// every kind of event, the ones its kind does not have left zero.
type StreamEvent struct {
	Ev string `json:"ev"`
	// room (also refused's room and ref)
	Ref              int64                  `json:"ref"`
	Room             *int64                 `json:"room"`
	Status           *receiver.TransferPoll `json:"status"`
	BootstrapToken   int64                  `json:"bootstrapToken"`
	SpecCandidateIDs []int32                `json:"specCandidateIds"`
	FailureCode      *string                `json:"failureCode"`
	FailureMessage   *string                `json:"failureMessage"`
	// refused, closed
	HTTPStatus int    `json:"httpStatus"`
	Op         string `json:"op"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	// resync
	Rooms int `json:"rooms"`
	// hello
	Protocol     int    `json:"protocol"`
	EngineRank   int    `json:"engineRank"`
	SessionID    string `json:"sessionId"`
	Registration uint64 `json:"registration"`
	Replaced     bool   `json:"replaced"`
}

// DecodeEvent decodes one event line (without its newline). Fields it does
// not know are ignored (a newer agent may add some); a room event whose
// status is not a state, or an event without "ev", is an error.
func DecodeEvent(line []byte) (StreamEvent, error) {
	if ev, ok := scanRoomEvent(line); ok {
		return ev, nil
	}
	return decodeEventJSON(line)
}

// decodeEventJSON is DecodeEvent by encoding/json.
func decodeEventJSON(line []byte) (StreamEvent, error) {
	ev := StreamEvent{BootstrapToken: -1}
	if err := json.Unmarshal(line, &ev); err != nil {
		return StreamEvent{}, fmt.Errorf("event %q is not the expected JSON object: %s", truncateLine(line), describeJSONError(err))
	}
	switch ev.Ev {
	case EvRoom:
		if ev.Room == nil || ev.Status == nil {
			return StreamEvent{}, fmt.Errorf("room event %q has no room or no status", truncateLine(line))
		}
	case "":
		return StreamEvent{}, fmt.Errorf("line %q has no \"ev\"", truncateLine(line))
	}
	return ev, nil
}

func truncateLine(line []byte) string {
	const most = 200
	if len(line) > most {
		return string(line[:most]) + "…"
	}
	return string(line)
}
