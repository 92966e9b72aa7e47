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
	"slices"
	"strings"
	"testing"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// The local API's bodies come from another process: no input may panic,
// and what is accepted must mean what it says.

func FuzzParseEngine(f *testing.F) {
	f.Add([]byte(`{"sessionId":"127.0.0.1:1","kvDataPtrs":[1,18446744073709551615],"stateDataPtrs":[]}`))
	f.Add([]byte(`{"sessionId":"h:1","kvDataPtrs":null}`))
	f.Add([]byte(`{"kvDataPtrs":[-1]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"kind":"contract","sessionId":"127.0.0.1:1","kvDataPtr":139887084830720,"cacheLayout":{"plan":{}}}`))
	f.Add([]byte(`{"kind":"contract","sessionId":"h:1","kvDataPtr":1,"cacheLayout":[]}`))
	f.Add([]byte(`{"kind":"contract","kvDataPtrs":[1],"cacheLayout":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		info, err := parseEngine(bytes.NewReader(body))
		if err != nil {
			return
		}
		if info.Contract != nil { // the contract kind: an object within budget, as it was written
			var again ContractEngineBody
			if json.Unmarshal(body, &again) != nil || again.Kind != WireContract || *again.SessionID != info.SessionID || *again.KVDataPtr != info.ArenaPtr ||
				!bytes.Equal(again.CacheLayout, info.Contract) || info.Contract[0] != '{' || len(info.Contract) > plancontract.MaxBytes {
				t.Fatalf("accepted %q as %+v", body, info)
			}
			return
		}
		var again EngineBody
		if json.Unmarshal(body, &again) != nil || again.SessionID == nil || *again.SessionID != info.SessionID || !slices.Equal(again.KVDataPtrs, info.KVDataPtrs) {
			t.Fatalf("accepted %q as %+v", body, info)
		}
	})
}

func FuzzParseOpen(f *testing.F) {
	f.Add([]byte(`{"bootstrapAddr":"prefill:8998","room":9223372036854775807}`))
	f.Add([]byte(`{"bootstrapAddr":"","room":0}`))
	f.Add([]byte(`{"room":1.5}`))
	f.Add([]byte(`{"bootstrapAddr":"a:1","room":1}garbage`))
	f.Fuzz(func(t *testing.T, body []byte) {
		addr, room, err := parseOpen(bytes.NewReader(body))
		if err != nil {
			return
		}
		if room < 0 {
			t.Fatalf("accepted negative room %d from %q", room, body)
		}
		var again OpenBody
		if json.Unmarshal(body, &again) != nil || *again.Room != room || *again.BootstrapAddr != addr {
			t.Fatalf("accepted %q as %q %d", body, addr, room)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"kvIndices":[1,2,3],"auxIndex":4,"decodePrefixLen":0,"mambaIndices":[5]}`))
	f.Add([]byte(`{"kvIndices":[],"auxIndex":0}`))
	f.Add([]byte(`{"kvIndices":[1e3],"auxIndex":0}`))
	f.Add([]byte(`{"kvIndices":[9223372036854775808],"auxIndex":0}`))
	f.Add([]byte(`{"kind":"contract","manifest":{"groups":[{"group_id":"g","block_ids":[1,2]}],"prefix_len":0,"prompt_len":9}}`))
	f.Add([]byte(`{"kind":"contract","manifest":"{}"}`))
	f.Add([]byte(`{"manifest":{},"kind":"contract","auxIndex":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRequest(bytes.NewReader(body))
		if err != nil {
			if be := (*bodyError)(nil); !errors.As(err, &be) || be.msg == "" {
				t.Fatalf("error %v is not a described body error", err)
			}
			return
		}
		if req.Manifest != nil {
			// the clients' form is read by position (contractscan.go); any
			// other has a JSON object (encoding/json checked it)
			trimmed := bytes.TrimRight(body, " \t\r\n")
			positional := bytes.HasPrefix(trimmed, contractBodyHead) && bytes.Equal(req.Manifest, trimmed[len(contractBodyHead):len(trimmed)-1])
			if req.KVIndices != nil || len(req.Manifest) == 0 || len(req.Manifest) > kvcontract.MaxManifestBytes || !positional && req.Manifest[0] != '{' {
				t.Fatalf("accepted %q as the manifest %q", body, req.Manifest)
			}
			return
		}
		if req.KVIndices == nil {
			t.Fatalf("accepted %q without kvIndices", body)
		}
	})
}

func FuzzPathAndQuery(f *testing.F) {
	for _, s := range []string{"0", "-1", "9223372036854775807", "1e3", "", "2s", "61s", "-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if room, err := parseRoom(s); err == nil && (room < 0 || strings.TrimLeft(s, "+0") == "" && room != 0) {
			t.Fatalf("room %q → %d", s, room)
		}
		if d, err := parseWait(s); err == nil && (d < 0 || d > MaxWait) {
			t.Fatalf("wait %q → %v", s, d)
		}
	})
}

// The engine stream's lines come from another process too (operations
// from the engine, events from the agent).

func FuzzDecodeOp(f *testing.F) {
	f.Add([]byte(`{"op":"open","room":1,"ref":7,"bootstrapAddr":"prefill:8998"}`))
	f.Add([]byte(`{"op":"request","room":1,"request":{"kvIndices":[1,2],"auxIndex":3}}`))
	f.Add([]byte(`{"op":"clear","room":9223372036854775807}`))
	f.Add([]byte(`{"op":"open","room":-1}`))
	f.Add([]byte(`{"op":"request","room":1,"request":null}`))
	f.Add([]byte(`{"op":"dance"}`))
	f.Add([]byte(`{"op":"open","room":1,"bootstrapAddr":"a:1"} {}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, line []byte) {
		op, err := DecodeOp(line)
		if err != nil {
			var oe *OpError
			if !errors.As(err, &oe) || oe.Error() == "" {
				t.Fatalf("%q: error %v is not an OpError with a message", line, err)
			}
			if oe.Room != nil && !knownOp(oe.Op) {
				t.Fatalf("%q: a refusal of unknown op %q", line, oe.Op)
			}
			return
		}
		switch {
		case !knownOp(op.Op) || op.Room == nil || *op.Room < 0:
			t.Fatalf("accepted %q as %+v", line, op)
		case op.Op == OpOpen && op.BootstrapAddr == nil, op.Op == OpRequest && len(op.Request) == 0:
			t.Fatalf("accepted %q without its payload", line)
		}
		again, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeOp(again)
		if err != nil || back.Op != op.Op || *back.Room != *op.Room || back.Ref != op.Ref {
			t.Fatalf("%q → %s → %+v %v", line, again, back, err)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	msg, code := "prefill TP rank 1 reported Failed", "PrefillReportedFailure"
	f.Add(AppendRoomEvent(nil, receiver.RoomEvent{Ref: 3, RoomStatus: receiver.RoomStatus{Room: 9, Status: receiver.Success, BootstrapToken: 5, SpecCandidateIDs: []int32{1, 2}}}))
	f.Add(AppendRoomEvent(nil, receiver.RoomEvent{Ref: 1, RoomStatus: receiver.RoomStatus{Room: 2, Status: receiver.Failed, BootstrapToken: -1, Failure: &receiver.RoomFailure{Reason: receiver.FailureReason(code), Message: msg}}}))
	f.Add(AppendRefused(nil, OpOpen, nil, 0, 409, "RoomExists", "room 1 is open"))
	f.Add(AppendClosed(nil, "Shutdown", "bye"))
	f.Add(AppendResync(nil, 3))
	f.Add([]byte(`{"ev":"hello","protocol":1,"engineRank":0,"sessionId":"h:1","registration":2,"replaced":true,"future":{}}`))
	f.Add([]byte(`{"ev":"room","room":1,"status":"Sideways"}`))
	f.Add([]byte(`{"ev":"room","status":"Success"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeEvent(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			if ev.Ev != "" {
				t.Fatalf("%q: error %v with an event %+v", line, err, ev)
			}
			return
		}
		if ev.Ev == "" {
			t.Fatalf("accepted %q without ev", line)
		}
		if ev.Ev != EvRoom {
			return
		}
		if ev.Room == nil || ev.Status == nil || !ev.Status.Valid() {
			t.Fatalf("accepted room event %q as %+v", line, ev)
		}
		st := receiver.RoomStatus{Room: *ev.Room, Status: *ev.Status, BootstrapToken: ev.BootstrapToken, SpecCandidateIDs: ev.SpecCandidateIDs}
		if ev.FailureCode != nil && ev.FailureMessage != nil {
			st.Failure = &receiver.RoomFailure{Reason: receiver.FailureReason(*ev.FailureCode), Message: *ev.FailureMessage}
		}
		back, err := DecodeEvent(bytes.TrimSuffix(AppendRoomEvent(nil, receiver.RoomEvent{Ref: ev.Ref, RoomStatus: st}), []byte("\n")))
		if err != nil || *back.Room != *ev.Room || *back.Status != *ev.Status || back.Ref != ev.Ref || back.BootstrapToken != ev.BootstrapToken ||
			!slices.Equal(back.SpecCandidateIDs, ev.SpecCandidateIDs) {
			t.Fatalf("%q → %+v → %+v %v", line, ev, back, err)
		}
	})
}
