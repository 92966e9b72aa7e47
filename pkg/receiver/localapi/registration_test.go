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
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// TestEngineRestartReplacesTheRegistration: an engine that restarts in its
// pod registers new buffers and a new session. The agent takes them (200,
// replaced), fails the old registration's unfinished rooms with
// EngineReregistered, keeps its finished ones, and registers the new
// session with the prefill ranks before the next room's request.
func TestEngineRestartReplacesTheRegistration(t *testing.T) {
	p := newAPIPair(t, nil)
	p.peer.SetDefault(prefillpeer.Success(5))
	old := receivertest.Engine(p.snap, 0)
	restarted := old
	restarted.SessionID = "127.0.0.1:18000"
	restarted.KVDataPtrs = []uint64{0x6f0000000000, 0x6f0000100000, 0x6f0000200000, 0x6f0000300000}
	body := func(info receiver.EngineInfo) string {
		b, _ := json.Marshal(map[string]any{"sessionId": info.SessionID, "kvDataPtrs": info.KVDataPtrs})
		return string(b)
	}

	var reg EngineRegistered
	p.do("PUT", "/v1/engine", body(old), http.StatusOK, &reg)
	if reg != (EngineRegistered{SessionID: old.SessionID, Registration: 1}) {
		t.Fatalf("first registration: %+v", reg)
	}
	p.do("POST", "/v1/rooms", p.openBody(1), http.StatusCreated, nil)
	p.waitBootstrapped("1")
	p.do("POST", "/v1/rooms/1/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusAccepted, nil)
	var done RoomBody
	p.do("GET", "/v1/rooms/1?wait=10s", "", http.StatusOK, &done)
	p.do("POST", "/v1/rooms", p.openBody(2), http.StatusCreated, nil) // bootstrapped, never requested
	p.waitBootstrapped("2")
	p.do("PUT", "/v1/engine", body(old), http.StatusOK, &reg) // the same values: nothing changes
	if reg.Replaced || reg.Registration != 1 {
		t.Fatalf("the same registration again: %+v", reg)
	}

	p.do("PUT", "/v1/engine", body(restarted), http.StatusOK, &reg)
	if reg != (EngineRegistered{SessionID: restarted.SessionID, Registration: 2, Replaced: true}) {
		t.Fatalf("the restarted engine's registration: %+v", reg)
	}
	var room RoomBody
	p.do("GET", "/v1/rooms/2", "", http.StatusOK, &room)
	if room.Status != "Failed" || room.FailureCode == nil || *room.FailureCode != string(receiver.ReasonEngineReregistered) ||
		!strings.Contains(*room.FailureMessage, old.SessionID+" → "+restarted.SessionID) {
		t.Fatalf("an unfinished room of the old registration: %+v", room)
	}
	p.do("GET", "/v1/rooms/1", "", http.StatusOK, &room)
	if done.Status != "Success" || room.Status != "Success" {
		t.Fatalf("a finished room of the old registration: %+v, then %+v", done, room)
	}

	p.do("POST", "/v1/rooms", p.openBody(3), http.StatusCreated, nil)
	if room = p.waitBootstrapped("3"); room.Status != "Bootstrapped" {
		t.Fatalf("a new room: %+v", room)
	}
	p.do("POST", "/v1/rooms/3/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusAccepted, nil)
	p.do("GET", "/v1/rooms/3?wait=10s", "", http.StatusOK, &room)
	if room.Status != "Success" {
		t.Fatalf("a new room after the restart: %+v", room)
	}
	for _, tp := range []int{0, 1} {
		var sessions []string
		for _, g := range p.peer.Rank(tp).Registrations() {
			sessions = append(sessions, g.SessionID)
		}
		if strings.Join(sessions, ",") != old.SessionID+","+restarted.SessionID {
			t.Fatalf("prefill rank %d got registrations of %v, want the old then the new session", tp, sessions)
		}
		for _, q := range p.peer.Rank(tp).Requests() {
			if want := map[int64]string{1: old.SessionID, 3: restarted.SessionID}[q.Room]; q.SessionID != want {
				t.Fatalf("prefill rank %d: room %d's request carries session %s, want %s", tp, q.Room, q.SessionID, want)
			}
		}
	}
}
