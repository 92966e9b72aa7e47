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
	"errors"
	"slices"
	"strings"
	"testing"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// The lines both clients write (pkg/receiver/agentclient/stream.go,
// clients/python/pdtopo_agent/roomtable.py and receiver.py) take the fast
// path, and give what the encoding/json path gives.
func TestClientLinesTakeTheFastPath(t *testing.T) {
	for _, line := range []string{
		`{"op":"open","room":7,"ref":1,"bootstrapAddr":"10.0.0.3:8998"}`,
		`{"op":"open","room":9223372036854775807,"ref":-9223372036854775808,"bootstrapAddr":"[::1]:8998"}`,
		`{"op":"request","room":7,"ref":1,"request":{"kvIndices":[1,2,3],"auxIndex":4,"decodePrefixLen":0}}`,
		`{"op":"request","room":7,"ref":1,"request":{"kvIndices":[],"auxIndex":0,"decodePrefixLen":16,"mambaIndices":[5]}}`,
		`{"op":"request","room":7,"ref":1,"request":{"kind":"v1","kvIndices":[-1],"auxIndex":4}}`,
		`{"op":"request","room":7,"ref":1,"request":{"kind":"contract","manifest":{"groups":[{"group_id":"g","block_ids":[1,2]}],"prefix_len":0,"prompt_len":32}}}`,
		`{"op":"request","room":7,"ref":1,"request":{"kind":"contract","manifest":{"groups":[{"group_id":"a\"}{[","block_ids":[]}],"prefix_len":0,"prompt_len":1}}}`,
		`{"op":"clear","room":7,"ref":1}`,
		`{"op":"clear","room":0}`,
		` { "op" : "clear" , "room" : 0 } `,
	} {
		fast, req, ok := scanOp([]byte(line))
		if !ok {
			t.Errorf("%s: left to encoding/json", line)
			continue
		}
		agree(t, []byte(line), fast, req)
	}
}

// What the fast path leaves to encoding/json: anything outside its subset,
// and every line DecodeOp refuses, which it must describe as before.
func TestOtherLinesAreLeftToEncodingJSON(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{`{"op":"clear","room":1.0}`, ""},
		{`{"op":"clear","room":1e2}`, ""},
		{`{"op":"clear","room":01}`, "invalid character '1' after object key:value pair"},
		{`{"op":"open","room":1,"bootstrapAddr":"a\u003a1"}`, ""},
		{`{"op":"open","room":1,"bootstrapAddr":"é:1"}`, ""},
		{`{"op":"clear","room":1,"room":2}`, ""},
		{`{"OP":"clear","room":1}`, ""},
		{`{"op":"clear","room":null}`, `"op" must be one of open, request, clear`},
		{`{"op":"clear","room":-1}`, `"room" is -1; rooms are non-negative`},
		{`{"op":"clear","room":9223372036854775808}`, `field "room" must be int64`},
		// past int64 where no room check follows: 2^63 must not wrap to -2^63
		{`{"op":"clear","room":1,"ref":9223372036854775808}`, `field "ref" must be int64`},
		{`{"op":"clear","room":1,"ref":-9223372036854775809}`, `field "ref" must be int64`},
		{`{"op":"request","room":1,"request":{"kvIndices":[9223372036854775808],"auxIndex":0}}`, ""},
		{`{"op":"request","room":1,"request":{"kvIndices":[1],"auxIndex":9223372036854775808}}`, ""},
		{`{"op":"open","room":1}`, `open needs "bootstrapAddr"`},
		{`{"op":"request","room":1}`, `request needs "request"`},
		{`{"op":"request","room":1,"request":{"kind":"contract","kvIndices":[1],"auxIndex":0}}`, ""},
		{`{"op":"request","room":1,"request":{"kind":"contract","manifest":{}}}`, ""}, // no ref: not the clients' form
		{`{"op":"request","room":1,"ref":1,"request":{"manifest":{},"kind":"contract"}}`, ""},
		{`{"op":"request","room":1,"ref":1,"request":{"kind":"contract","manifest":{}},"x":1}`, `unknown field "x"`},
		{`{"op":"request","room":1,"ref":1,"request":{"kind":"contract","manifest":}}`, "invalid character"},
		{`{"op":"request","room":-1,"ref":1,"request":{"kind":"contract","manifest":{}}}`, `"room" is -1`},
		{`{"op":"request","room":1,"request":{"kind":"v1","manifest":{}}}`, ""},
		{`{"op":"request","room":1,"request":{"kvIndices":[1],"auxIndex":0,"mambaIndices":null}}`, ""},
		{`{"op":"request","room":1,"request":{"kvIndices":[1]}}`, ""},
		{`{"op":"clear","room":1,"extra":true}`, `unknown field "extra"`},
		{`{"op":"clear","room":1} {}`, "data after the JSON object"},
		{`{"op":"close","room":1}`, `"op" must be one of open, request, clear`},
		{`{}`, `"op" must be one of open, request, clear`},
		{`{"op":"clear","room":1`, "unexpected EOF"},
	} {
		if _, _, ok := scanOp([]byte(tc.line)); ok {
			t.Errorf("%s: taken by the fast path", tc.line)
		}
		_, err := DecodeOp([]byte(tc.line))
		switch {
		case tc.err == "" && err != nil:
			// accepted by DecodeOp; a request body is then checked on apply
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: DecodeOp said %v, want %q", tc.line, err, tc.err)
		}
	}
}

// agree holds a line the fast path accepted to the encoding/json path's
// reading of it: the same operation, and the same request as
// parseRequestBytes makes of the same body (nil and empty slices apart).
func agree(t *testing.T, line []byte, fast StreamOp, req *receiver.TransferRequest) {
	t.Helper()
	slow, err := decodeOpJSON(line)
	if err != nil {
		t.Fatalf("%q: the fast path accepted what encoding/json refuses: %v", line, err)
	}
	if fast.Op != slow.Op || *fast.Room != *slow.Room || fast.Ref != slow.Ref ||
		(fast.BootstrapAddr == nil) != (slow.BootstrapAddr == nil) ||
		(fast.BootstrapAddr != nil && *fast.BootstrapAddr != *slow.BootstrapAddr) ||
		!bytes.Equal(fast.Request, slow.Request) {
		t.Fatalf("%q: fast %+v, encoding/json %+v", line, fast, slow)
	}
	if (req != nil) != (slow.Op == OpRequest) {
		t.Fatalf("%q: parsed request %v for op %q", line, req, slow.Op)
	}
	if req != nil && req.Manifest != nil {
		want, ok := scanContractBody(slow.Request)
		if !ok || !bytes.Equal(req.Manifest, want.Manifest) {
			t.Fatalf("%q: the fast path's manifest %q is not the body's", line, req.Manifest)
		}
		return
	}
	if req == nil {
		return
	}
	want, err := parseRequestBytes(slow.Request)
	if err != nil {
		t.Fatalf("%q: the fast path accepted a request parseRequestBytes refuses: %v", line, err)
	}
	if !slices.Equal(req.KVIndices, want.KVIndices) || (req.KVIndices == nil) != (want.KVIndices == nil) ||
		req.AuxIndex != want.AuxIndex || req.DecodePrefixLen != want.DecodePrefixLen ||
		!slices.Equal(req.MambaIndices, want.MambaIndices) || (req.MambaIndices == nil) != (want.MambaIndices == nil) {
		t.Fatalf("%q: fast request %+v, encoding/json %+v", line, *req, want)
	}
}

// Operation lines come off the engine's socket: whatever the fast path
// accepts, encoding/json reads the same way.
func FuzzScanOpAgreesWithDecodeOp(f *testing.F) {
	for _, s := range []string{
		`{"op":"open","room":7,"ref":1,"bootstrapAddr":"10.0.0.3:8998"}`,
		`{"op":"request","room":7,"ref":1,"request":{"kvIndices":[1,2,3],"auxIndex":4,"decodePrefixLen":0,"mambaIndices":[]}}`,
		`{"op":"clear","room":-0,"ref":-9223372036854775808}`,
		`{"op":"clear","room":922337203685477580}`,
		`{"op":"clear","room":9223372036854775807}`,
		`{"op":"request","room":1,"request":{"kind":"v1","kvIndices":[0],"auxIndex":0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"op":"request","room":1,"ref":2,"request":{"kind":"contract","manifest":{"groups":[],"prefix_len":0,"prompt_len":1}}}`))
	f.Add([]byte(`{"op":"request","room":1,"ref":2,"request":{"manifest":{"x":"\"}"},"kind":"contract"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, req, ok := scanOp(line)
		if ok && req != nil && req.Manifest != nil {
			if _, err := decodeOpJSON(line); err != nil {
				// the manifest is found, not decoded: one that is not JSON
				// reaches the Manager, whose strict reading refuses it
				if _, merr := kvcontract.DecodeManifest(req.Manifest); merr == nil {
					t.Fatalf("%q: encoding/json refuses the line (%v) but its manifest decodes", line, err)
				}
				return
			}
		}
		if !ok {
			if _, err := DecodeOp(line); err != nil {
				var oe *OpError
				if !errors.As(err, &oe) {
					t.Fatalf("%q: error %v is not an OpError", line, err)
				}
			}
			return
		}
		agree(t, line, fast, req)
	})
}

// Room events as the agent writes them take the clients' fast path and
// read as encoding/json reads them.
func TestRoomEventsTakeTheFastPath(t *testing.T) {
	failure := &receiver.RoomFailure{Reason: receiver.ReasonBootstrapTimeout, Message: "room 7 did not finish bootstrapping with 10.0.0.3:8998 within 30s"}
	for _, st := range []receiver.RoomStatus{
		{Room: 7, Status: receiver.Bootstrapping, BootstrapToken: -1},
		{Room: 7, Status: receiver.Success, BootstrapToken: 1234, SpecCandidateIDs: []int32{-2147483648, 0, 2147483647}},
		{Room: 9223372036854775807, Status: receiver.Success, BootstrapToken: 5, SpecCandidateIDs: []int32{}},
		{Room: 7, Status: receiver.Failed, BootstrapToken: -1, Failure: failure},
	} {
		line := bytes.TrimSuffix(AppendRoomEvent(nil, receiver.RoomEvent{Ref: 3, RoomStatus: st}), []byte("\n"))
		fast, ok := scanRoomEvent(line)
		if !ok {
			t.Errorf("%s: left to encoding/json", line)
			continue
		}
		agreeEvent(t, line, fast)
	}
	for _, line := range []string{
		`{"ev":"room","ref":1,"room":7,"status":"Failed","bootstrapToken":-1,"specCandidateIds":null,"failureCode":"X","failureMessage":"a \"quoted\" address"}`,
		`{"ev":"room","ref":1,"room":7,"status":"Nope","bootstrapToken":-1}`,
		`{"ev":"room","ref":1,"room":7,"status":"Success","specCandidateIds":[2147483648]}`,
		`{"ev":"room","ref":1,"room":7,"status":"Success","bootstrapToken":9223372036854775808}`,
		`{"ev":"room","ref":9223372036854775808,"room":7,"status":"Success"}`,
		`{"ev":"room","room":7,"status":"Success","newField":1}`,
		`{"ev":"refused","op":"open","room":7,"ref":1,"httpStatus":429,"code":"TooManyRooms","message":"m"}`,
	} {
		if _, ok := scanRoomEvent([]byte(line)); ok {
			t.Errorf("%s: taken by the fast path", line)
		}
	}
}

func agreeEvent(t *testing.T, line []byte, fast StreamEvent) {
	t.Helper()
	slow, err := decodeEventJSON(line)
	if err != nil {
		t.Fatalf("%q: the fast path accepted what encoding/json refuses: %v", line, err)
	}
	eqp := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	if fast.Ev != slow.Ev || fast.Ref != slow.Ref || *fast.Room != *slow.Room || *fast.Status != *slow.Status ||
		fast.BootstrapToken != slow.BootstrapToken || !slices.Equal(fast.SpecCandidateIDs, slow.SpecCandidateIDs) ||
		(fast.SpecCandidateIDs == nil) != (slow.SpecCandidateIDs == nil) ||
		!eqp(fast.FailureCode, slow.FailureCode) || !eqp(fast.FailureMessage, slow.FailureMessage) {
		t.Fatalf("%q: fast %+v, encoding/json %+v", line, fast, slow)
	}
}

// Event lines come off the agent's socket into the engine: whatever the
// fast path accepts, encoding/json reads the same way.
func FuzzScanRoomEventAgreesWithDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"ev":"room","ref":3,"room":7,"status":"Success","bootstrapToken":1234,"specCandidateIds":[1,2],"failureCode":null,"failureMessage":null}`,
		`{"ev":"room","ref":3,"room":7,"status":"Failed","bootstrapToken":-1,"specCandidateIds":null,"failureCode":"BootstrapTimeout","failureMessage":"m"}`,
		`{"ev":"room","room":7,"status":"Bootstrapping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if fast, ok := scanRoomEvent(line); ok {
			agreeEvent(t, line, fast)
		}
	})
}
