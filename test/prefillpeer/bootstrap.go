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

package prefillpeer

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// bootstrapServer is the prefill instance's rendezvous, answering as the
// reference's aiohttp server does: PUT /route files a rank, GET /route
// answers the parallel info or one rank's address, GET /health says "OK".
type bootstrapServer struct {
	addr   string
	srv    *http.Server
	served chan struct{}
	// stop releases hanging handlers when the server goes away.
	stop     chan struct{}
	stopOnce sync.Once

	mu sync.Mutex
	// Learned from the first PUT, as the reference does; zero until then.
	worldSize, dpSize int
	// wire is what the ranks register with, and what it learned of them.
	wire  peerWire
	ranks map[int]map[int]kvwire.RankAddress // dp group → TP rank → address
	fault BootstrapFault

	stats struct{ put, parallelInfo, rankAddress, health, bad atomic.Int64 }
}

func startBootstrap(host string, port int, wire peerWire) (*bootstrapServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	b := &bootstrapServer{addr: ln.Addr().String(), served: make(chan struct{}), stop: make(chan struct{}), ranks: map[int]map[int]kvwire.RankAddress{}, wire: wire}
	mux := http.NewServeMux()
	mux.HandleFunc(kvwire.RoutePath, b.route)
	mux.HandleFunc(kvwire.HealthPath, b.health)
	b.srv = &http.Server{Handler: mux}
	go func() {
		defer close(b.served)
		_ = b.srv.Serve(ln) // returns ErrServerClosed on close
	}()
	return b, nil
}

// close stops answering at once: the listener closes (connections are
// refused, as from a dead process) and hanging handlers return.
func (b *bootstrapServer) close() {
	b.stopOnce.Do(func() { close(b.stop) })
	_ = b.srv.Close()
	<-b.served
}

func (b *bootstrapServer) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		text(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	n := b.stats.health.Add(1) - 1
	if b.injectFault(w, r, b.currentFault().healthFault(n)) {
		return
	}
	text(w, http.StatusOK, "OK")
}

func (b *bootstrapServer) route(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		b.put(w, r)
	case http.MethodGet:
		b.get(w, r)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte("Method not allowed"))
	}
}

func (b *bootstrapServer) put(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err == nil {
		err = b.wire.file(b, body)
	}
	if err != nil {
		// The reference raises inside its handler, which aiohttp turns into a 500.
		b.stats.bad.Add(1)
		text(w, http.StatusInternalServerError, "500 Internal Server Error: "+err.Error())
		return
	}
	b.stats.put.Add(1)
	text(w, http.StatusOK, "OK")
}

// file records a registration the way the reference does: sizes from the
// first one, the wire's extras (extras, under the lock) from the last, and
// — for role "Prefill" only — the address under the dp group that the
// registration's own sizes give.
func (b *bootstrapServer) file(reg kvwire.RankFields, extras func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.worldSize == 0 {
		b.worldSize, b.dpSize = reg.WorldSize, reg.DPSize
	}
	if extras != nil {
		extras()
	}
	if reg.Role != kvwire.RolePrefill {
		return
	}
	tpPerDP := reg.WorldSize / reg.DPSize
	group, tpRank := reg.EngineRank/tpPerDP, reg.EngineRank%tpPerDP
	if b.ranks[group] == nil {
		b.ranks[group] = map[int]kvwire.RankAddress{}
	}
	b.ranks[group][tpRank] = kvwire.RankAddress{RankIP: reg.RankIP, RankPort: reg.RankPort}
}

func (b *bootstrapServer) get(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	engineRank, dpGroup := q.Get("engine_rank"), q.Get("target_dp_group")
	if engineRank == "" || dpGroup == "" {
		b.stats.bad.Add(1)
		text(w, http.StatusBadRequest, "Missing inputs for bootstrap server.")
		return
	}
	rank, err1 := strconv.Atoi(engineRank)
	group, err2 := strconv.Atoi(dpGroup)
	if err := errors.Join(err1, err2); err != nil {
		// int() raising inside the reference handler: a 500.
		b.stats.bad.Add(1)
		text(w, http.StatusInternalServerError, "500 Internal Server Error: "+err.Error())
		return
	}
	fault := b.currentFault()
	if rank == -1 && group == -1 {
		b.stats.parallelInfo.Add(1)
		if !b.injectFault(w, r, fault.ParallelInfo) {
			jsonBody(w, b.parallelInfoBody(fault.ParallelInfo == FaultOtherWire))
		}
		return
	}
	b.stats.rankAddress.Add(1)
	if b.injectFault(w, r, fault.RankAddress) {
		return
	}
	b.mu.Lock()
	addr, ok := b.ranks[group][rank]
	b.mu.Unlock()
	if !ok {
		// The reference's table lookup raises KeyError: a 500, not a 404.
		text(w, http.StatusInternalServerError, "500 Internal Server Error: no prefill rank "+engineRank+" in dp group "+dpGroup)
		return
	}
	jsonBody(w, addr.MarshalPython())
}

// parallelInfoBody is the answer of the server's wire, or with otherWire
// of the other one (a server that changed its mind).
func (b *bootstrapServer) parallelInfoBody(otherWire bool) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if otherWire {
		return b.wire.otherParallelInfo(b)
	}
	return b.wire.parallelInfo(b)
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

func jsonBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
