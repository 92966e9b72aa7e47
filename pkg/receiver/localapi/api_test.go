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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// apiPair is the local API of a real agent serving decode rank 0 of the
// P8→D4 pair against a real prefill peer, over loopback HTTP.
type apiPair struct {
	t    *testing.T
	url  string
	peer *prefillpeer.Peer
	snap receiver.PlanSnapshot
}

func newAPIPair(t *testing.T, mut func(*receiver.Config)) *apiPair {
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, nil)
	snap := receivertest.Snapshot(t, l, 0)
	m, reg := receivertest.StartAgent(t, &snap, 0, mut)
	srv := httptest.NewServer(Handler(m, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	t.Cleanup(srv.Close)
	return &apiPair{t: t, url: srv.URL, peer: peer, snap: snap}
}

// do sends a request and decodes the JSON answer into out (if not nil),
// failing unless the status is want.
func (p *apiPair) do(method, path, body string, want int, out any) string {
	p.t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		p.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("%s %s: answer %s: %v", method, path, raw, err)
		}
	}
	return string(raw)
}

// expectError checks an error answer's status and code.
func (p *apiPair) expectError(method, path, body string, status int, code string) string {
	p.t.Helper()
	var e ErrorBody
	p.do(method, path, body, status, &e)
	if e.Error.Code != code || e.Error.Message == "" {
		p.t.Fatalf("%s %s: error %+v, want code %s and a message", method, path, e.Error, code)
	}
	return e.Error.Message
}

// waitBootstrapped polls a room until it left Bootstrapping (the first
// room of an address waits for the bootstrap server).
func (p *apiPair) waitBootstrapped(room string) RoomBody {
	p.t.Helper()
	return testutil.EventuallyValue(p.t, 10*time.Second, "room "+room+" out of Bootstrapping", func() (RoomBody, error) {
		var b RoomBody
		p.do("GET", "/v1/rooms/"+room, "", http.StatusOK, &b)
		if b.Status == "Bootstrapping" {
			return b, fmt.Errorf("%+v", b)
		}
		return b, nil
	})
}

func (p *apiPair) engineBody() string {
	info := receivertest.Engine(p.snap, 0)
	b, _ := json.Marshal(map[string]any{"sessionId": info.SessionID, "kvDataPtrs": info.KVDataPtrs})
	return string(b)
}

func (p *apiPair) openBody(room int) string {
	b, _ := json.Marshal(map[string]any{"bootstrapAddr": p.peer.BootstrapAddr(), "room": room})
	return string(b)
}

func TestRoomLifecycleOverHTTP(t *testing.T) {
	p := newAPIPair(t, nil)
	// The Success comes late enough that the second request below finds the
	// room still in flight (an immediate one can finish the room first).
	p.peer.Script(12, prefillpeer.Success(321).After(time.Second))
	p.expectError("POST", "/v1/rooms", p.openBody(12), http.StatusConflict, string(receiver.CodeEngineNotRegistered))
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil) // same values again: fine
	p.expectError("PUT", "/v1/engine", `{"sessionId":"127.0.0.1:1","kvDataPtrs":[1,2,3]}`, http.StatusBadRequest, string(receiver.CodeInvalidArgument))

	var room RoomBody
	p.do("POST", "/v1/rooms", p.openBody(12), http.StatusCreated, &room)
	if room.Room != 12 || room.Status == "Failed" {
		t.Fatalf("opened room: %+v", room)
	}
	p.expectError("POST", "/v1/rooms", p.openBody(12), http.StatusConflict, string(receiver.CodeRoomExists))
	if room = p.waitBootstrapped("12"); room.Status != "Bootstrapped" {
		t.Fatalf("room 12: %+v", room)
	}
	p.do("POST", "/v1/rooms/12/request", `{"kvIndices":[1,2,3],"auxIndex":4,"decodePrefixLen":0}`, http.StatusAccepted, &room)
	p.expectError("POST", "/v1/rooms/12/request", `{"kvIndices":[1],"auxIndex":4}`, http.StatusConflict, string(receiver.CodeRoomAlreadyRequested))
	p.do("GET", "/v1/rooms/12?wait=5s", "", http.StatusOK, &room)
	if room.Status != "Success" || room.BootstrapToken != 321 || room.FailureMessage != nil || room.SpecCandidateIDs != nil {
		t.Fatalf("room 12: %+v", room)
	}
	p.do("DELETE", "/v1/rooms/12", "", http.StatusNoContent, nil)
	p.expectError("DELETE", "/v1/rooms/12", "", http.StatusNotFound, string(receiver.CodeRoomNotFound))
	p.expectError("GET", "/v1/rooms/12", "", http.StatusNotFound, string(receiver.CodeRoomNotFound))
	if metrics := p.do("GET", "/metrics", "", http.StatusOK, nil); !strings.Contains(metrics, `pdtopo_receiver_rooms_total{outcome="success"} 1`) {
		t.Fatalf("metrics do not count the room:\n%s", metrics)
	}
}

func TestFailedRoomReportsItsReason(t *testing.T) {
	p := newAPIPair(t, func(c *receiver.Config) { c.WaitingTimeout = 200 * time.Millisecond })
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	p.peer.Script(3, prefillpeer.Silence())
	var room RoomBody
	p.do("POST", "/v1/rooms", p.openBody(3), http.StatusCreated, &room)
	p.do("GET", "/v1/rooms/3?wait=5s", "", http.StatusOK, &room) // not requested: the waiting timeout still runs
	if room.Status != "Failed" || room.FailureCode == nil || *room.FailureCode != string(receiver.ReasonWaitingTimeout) || !strings.Contains(*room.FailureMessage, "its request was not sent") {
		t.Fatalf("room 3: %+v", room)
	}
	p.expectError("POST", "/v1/rooms/3/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusConflict, string(receiver.CodeRoomFinished))
}

// gatedBootstrap is a reverse proxy in front of a bootstrap server that
// holds every call until released, so a room stays Bootstrapping for as
// long as a test needs.
type gatedBootstrap struct {
	addr    string
	release chan struct{}
	held    chan struct{} // one value per call that reached the gate
}

func newGatedBootstrap(t *testing.T, target string) *gatedBootstrap {
	g := &gatedBootstrap{release: make(chan struct{}), held: make(chan struct{}, 64)}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case g.held <- struct{}{}:
		default:
		}
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.addr = strings.TrimPrefix(srv.URL, "http://")
	return g
}

// A request sent while the room is Bootstrapping is accepted (202) and sent
// the moment the room bootstraps: the engine does not poll in between.
func TestRequestWhileBootstrappingIsSentOnBootstrap(t *testing.T) {
	p := newAPIPair(t, nil)
	p.peer.Script(5, prefillpeer.Success(55))
	gate := newGatedBootstrap(t, p.peer.BootstrapAddr())
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	var room RoomBody
	p.do("POST", "/v1/rooms", `{"bootstrapAddr":"`+gate.addr+`","room":5}`, http.StatusCreated, &room)
	<-gate.held // the agent is asking the bootstrap server: the room cannot have bootstrapped
	p.do("POST", "/v1/rooms/5/request", `{"kvIndices":[1,2],"auxIndex":0}`, http.StatusAccepted, &room)
	if room.Status != "Bootstrapping" {
		t.Fatalf("the request's answer: %+v, want the room still Bootstrapping", room)
	}
	p.expectError("POST", "/v1/rooms/5/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusConflict, string(receiver.CodeRoomAlreadyRequested))
	close(gate.release)
	p.do("GET", "/v1/rooms/5?wait=10s", "", http.StatusOK, &room)
	if room.Status != "Success" || room.BootstrapToken != 55 {
		t.Fatalf("room 5: %+v, want Success with token 55", room)
	}
	var seen []string
	for _, rank := range p.peer.Ranks() {
		for _, q := range rank.Requests() {
			if q.Room == 5 && !q.Dummy {
				seen = append(seen, fmt.Sprint(q.KVIndices))
			}
		}
	}
	if len(seen) == 0 || seen[0] != "[1 2]" {
		t.Fatalf("prefill ranks saw room 5's pages %v, want [1 2]", seen)
	}
}

// A queued request whose room then fails to bootstrap fails with the
// bootstrap's reason.
func TestRequestWhileBootstrappingFailsWithTheBootstrapReason(t *testing.T) {
	p := newAPIPair(t, func(c *receiver.Config) { c.HTTPTimeout = 300 * time.Millisecond })
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	p.peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultHang})
	p.do("POST", "/v1/rooms", p.openBody(5), http.StatusCreated, nil)
	var room RoomBody
	p.do("POST", "/v1/rooms/5/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusAccepted, &room)
	if room.Status != "Bootstrapping" {
		t.Fatalf("the request's answer: %+v", room)
	}
	p.do("GET", "/v1/rooms/5?wait=10s", "", http.StatusOK, &room)
	if room.Status != "Failed" || room.FailureCode == nil || *room.FailureCode != string(receiver.ReasonParallelInfoUnavailable) ||
		!strings.Contains(*room.FailureMessage, p.peer.BootstrapAddr()) {
		t.Fatalf("room 5: %+v, want Failed with %s naming %s", room, receiver.ReasonParallelInfoUnavailable, p.peer.BootstrapAddr())
	}
}

func TestBadRequestsGetJSONErrors(t *testing.T) {
	p := newAPIPair(t, nil)
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	p.do("POST", "/v1/rooms", p.openBody(1), http.StatusCreated, nil)
	p.waitBootstrapped("1")
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/rooms", `{"bootstrapAddr":"x:1"`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"bootstrapAddr":"x:1","room":1,"extra":2}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"room":1}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"bootstrapAddr":"x:1","room":-1}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"bootstrapAddr":"x:1","room":"7"}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"bootstrapAddr":"x:1","room":1} {}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms", `{"bootstrapAddr":"no-port","room":2}`, 400, string(receiver.CodeInvalidArgument)},
		{"POST", "/v1/rooms/1/request", `{"auxIndex":1}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms/1/request", `{"kvIndices":[1],"auxIndex":-1}`, 400, string(receiver.CodeInvalidArgument)},
		{"POST", "/v1/rooms/x/request", `{"kvIndices":[1],"auxIndex":1}`, 400, CodeBadRequestBody},
		{"GET", "/v1/rooms/99999999999999999999", "", 400, CodeBadRequestBody},
		{"GET", "/v1/rooms/1?wait=forever", "", 400, CodeBadRequestBody},
		{"PATCH", "/v1/rooms/1", "", 405, CodeMethodNotAllowed},
		{"GET", "/v1/engine", "", 405, CodeMethodNotAllowed},
		{"GET", "/v2/rooms", "", 404, CodeNoSuchEndpoint},
		{"PUT", "/v1/engine", `{"sessionId":"not a session","kvDataPtrs":[1]}`, 400, string(receiver.CodeInvalidArgument)},
		{"PUT", "/v1/engine", `{"kind":"contract","sessionId":"127.0.0.1:1","kvDataPtrs":[1]}`, 400, CodeBadRequestBody},
		{"POST", "/v1/rooms/1/request", `{"kind":"contract","kvIndices":[1],"auxIndex":1}`, 400, CodeBadRequestBody},
		{"POST", "/v1/engine/stream", `{}`, 426, CodeUpgradeRequired},
	}
	for _, c := range cases {
		p.expectError(c.method, c.path, c.body, c.status, c.code)
	}
	big := `{"kvIndices":[` + strings.Repeat("1,", MaxBodyBytes/2) + `1],"auxIndex":1}`
	p.expectError("POST", "/v1/rooms/1/request", big, http.StatusRequestEntityTooLarge, CodeBodyTooLarge)
}

func TestEngineValidation(t *testing.T) {
	p := newAPIPair(t, nil)
	p.expectError("PUT", "/v1/engine", `{"kvDataPtrs":[1,2,3,4]}`, 400, CodeBadRequestBody)
	p.expectError("PUT", "/v1/engine", `{"sessionId":"nohostport","kvDataPtrs":[1,2,3,4]}`, 400, string(receiver.CodeInvalidArgument))
	msg := p.expectError("PUT", "/v1/engine", `{"sessionId":"127.0.0.1:5","kvDataPtrs":[1,2]}`, 400, string(receiver.CodeInvalidArgument))
	if !strings.Contains(msg, "2 KV and 0 state buffers but the plan") || !strings.Contains(msg, "4 KV") {
		t.Fatalf("buffer count message: %q", msg)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	p := newAPIPair(t, nil)
	p.do("GET", "/healthz", "", http.StatusOK, nil)
	var ready map[string]any
	p.do("GET", "/readyz", "", http.StatusOK, &ready)
	if ready["engineRegistered"] != false {
		t.Fatalf("readyz: %v", ready)
	}
}

func TestNegativeIndicesAreRefused(t *testing.T) {
	p := newAPIPair(t, nil)
	p.do("PUT", "/v1/engine", p.engineBody(), http.StatusOK, nil)
	p.do("POST", "/v1/rooms", p.openBody(2), http.StatusCreated, nil)
	p.waitBootstrapped("2")
	msg := p.expectError("POST", "/v1/rooms/2/request", `{"kvIndices":[1,-2],"auxIndex":0}`, 400, string(receiver.CodeInvalidArgument))
	if !strings.Contains(msg, "kvIndices[1] is -2") {
		t.Fatalf("message %q", msg)
	}
	p.do("POST", "/v1/rooms/2/request", `{"kvIndices":[1,2],"auxIndex":0,"mambaIndices":[3]}`, http.StatusAccepted, nil)
}
