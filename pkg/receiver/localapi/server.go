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

// Package localapi is the receiver agent's HTTP/JSON API for the decode
// engine beside it: register the engine once, then open, request, poll and
// clear rooms; plus /healthz, /readyz and /metrics. It only translates
// between JSON and a receiver.Manager.
package localapi

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// Agent is what the API drives: a *receiver.Manager.
type Agent interface {
	EngineRank() int
	Register(receiver.EngineInfo) (receiver.Registered, error)
	OpenStream(receiver.EngineInfo, receiver.EventSink) (*receiver.Stream, receiver.Registered, error)
	Open(bootstrapAddr string, room int64) error
	Request(room int64, req receiver.TransferRequest) error
	Status(room int64) (receiver.RoomStatus, error)
	Wait(ctx context.Context, room int64) (receiver.RoomStatus, error)
	Clear(room int64) error
	Readiness() error
	EngineRegistered() bool
}

// EngineAPI serves one engine rank's API.
type EngineAPI struct {
	mux *http.ServeMux
	api *api
}

// Handler serves the API with the default stream bounds. metrics may be
// nil (no /metrics).
func Handler(agent Agent, metrics http.Handler) *EngineAPI {
	return NewEngineAPI(agent, metrics, StreamOptions{})
}

// NewEngineAPI serves the API with opts bounding each engine stream.
func NewEngineAPI(agent Agent, metrics http.Handler, opts StreamOptions) *EngineAPI {
	a := &api{agent: agent, opts: opts.withDefaults()}
	return &EngineAPI{mux: newMux(engineRoutes(a, metrics), "no such endpoint: "), api: a}
}

func (e *EngineAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// WaitStreams waits until every engine stream wrote its last events and
// closed (the Manager ends them when it closes), or until ctx ends. The
// HTTP server's Shutdown does not wait for them: a stream's connection is
// no longer the server's.
func (e *EngineAPI) WaitStreams(ctx context.Context) error {
	done := make(chan struct{})
	go func() { e.api.streams.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// route is one path and the handler of each method it answers.
type route struct {
	pattern  string
	byMethod map[string]http.HandlerFunc
}

func engineRoutes(a *api, metrics http.Handler) []route {
	routes := []route{
		{"/v1/engine", map[string]http.HandlerFunc{http.MethodPut: a.putEngine}},
		{"/v1/engine/stream", map[string]http.HandlerFunc{http.MethodPost: a.openStream}},
		{"/v1/rooms", map[string]http.HandlerFunc{http.MethodPost: a.openRoom}},
		{"/v1/rooms/{room}", map[string]http.HandlerFunc{http.MethodGet: a.getRoom, http.MethodDelete: a.clearRoom}},
		{"/v1/rooms/{room}/request", map[string]http.HandlerFunc{http.MethodPost: a.requestRoom}},
		{"/healthz", map[string]http.HandlerFunc{http.MethodGet: healthz}},
		{"/readyz", map[string]http.HandlerFunc{http.MethodGet: a.readyz}},
	}
	if metrics != nil {
		routes = append(routes, route{"/metrics", map[string]http.HandlerFunc{http.MethodGet: metrics.ServeHTTP}})
	}
	return routes
}

// newMux serves routes, answering other methods with 405 and other paths
// with 404, both as JSON errors.
func newMux(routes []route, notFound string) *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.HandleFunc(r.pattern, methods(r.byMethod))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, CodeNoSuchEndpoint, notFound+r.URL.Path)
	})
	return mux
}

// EngineRoutes lists the engine API's paths and the methods each answers
// (as docs/agent-api.openapi.yaml documents them).
func EngineRoutes() map[string][]string {
	return routeTable(engineRoutes(&api{}, http.NotFoundHandler()))
}

// ProbeRoutes is EngineRoutes for the probe address.
func ProbeRoutes() map[string][]string {
	return routeTable(probeRoutes(nil, http.NotFoundHandler()))
}

func routeTable(routes []route) map[string][]string {
	out := map[string][]string{}
	for _, r := range routes {
		for m := range r.byMethod {
			out[r.pattern] = append(out[r.pattern], m)
		}
		slices.Sort(out[r.pattern])
	}
	return out
}

type api struct {
	agent   Agent
	opts    StreamOptions
	streams sync.WaitGroup // streams whose connection is open
}

// ServerProtocols are the protocols the API is served with: HTTP/1.1, and
// HTTP/2 without TLS for clients that know to use it (prior knowledge), which
// carries many concurrent calls over one connection.
func ServerProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// methods dispatches on the method, answering others with a JSON 405.
func methods(byMethod map[string]http.HandlerFunc) http.HandlerFunc {
	allowed := make([]string, 0, len(byMethod))
	for m := range byMethod {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		if h, ok := byMethod[r.Method]; ok {
			h(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		writeJSONError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; use "+allow)
	}
}

func (a *api) putEngine(w http.ResponseWriter, r *http.Request) {
	info, err := parseEngine(r.Body)
	var reg receiver.Registered
	if err == nil {
		reg, err = a.agent.Register(info)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, EngineRegistered{SessionID: reg.SessionID, Registration: reg.Generation, Replaced: reg.Replaced})
}

func (a *api) openRoom(w http.ResponseWriter, r *http.Request) {
	addr, room, err := parseOpen(r.Body)
	if err == nil {
		err = a.agent.Open(addr, room)
	}
	a.answerRoom(w, room, http.StatusCreated, err)
}

func (a *api) requestRoom(w http.ResponseWriter, r *http.Request) {
	room, err := parseRoom(r.PathValue("room"))
	if err == nil {
		var req receiver.TransferRequest
		if req, err = parseRequest(r.Body); err == nil {
			err = a.agent.Request(room, req)
		}
	}
	a.answerRoom(w, room, http.StatusAccepted, err)
}

// getRoom answers a room's status; with ?wait=DURATION (at most MaxWait)
// it first waits for the room to finish, so an engine need not poll.
func (a *api) getRoom(w http.ResponseWriter, r *http.Request) {
	room, err := parseRoom(r.PathValue("room"))
	var wait time.Duration
	if err == nil {
		wait, err = parseWait(r.URL.Query().Get("wait"))
	}
	if err != nil || wait == 0 {
		a.answerRoom(w, room, http.StatusOK, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	st, err := a.agent.Wait(ctx, room)
	if err != nil {
		writeError(w, err)
		return
	}
	writeRoom(w, http.StatusOK, st)
}

// answerRoom writes err, or the room's current status with code.
func (a *api) answerRoom(w http.ResponseWriter, room int64, code int, err error) {
	var st receiver.RoomStatus
	if err == nil {
		st, err = a.agent.Status(room)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeRoom(w, code, st)
}

func (a *api) clearRoom(w http.ResponseWriter, r *http.Request) {
	room, err := parseRoom(r.PathValue("room"))
	if err == nil {
		err = a.agent.Clear(room)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is about the agent, not the engine: a pod is ready once its plan
// is loaded, before the engine beside it registered.
func (a *api) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := a.agent.Readiness(); err != nil {
		writeJSONError(w, http.StatusServiceUnavailable, errorCode(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "engineRegistered": a.agent.EngineRegistered()})
}
