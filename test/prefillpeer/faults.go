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
	"net/http"
)

// Fault is how a bootstrap endpoint misbehaves.
type Fault int

const (
	// NoFault answers normally.
	NoFault Fault = iota
	// Fault500 answers 500 Internal Server Error.
	Fault500
	// FaultHang never answers; the handler returns when the client gives up
	// or the peer closes, so a client's timeout is what ends it.
	FaultHang
	// FaultGarbage answers 200 with a body that is not JSON.
	FaultGarbage
	// FaultOtherWire answers the parallel info in the other wire's form: a
	// contract server answering as a v1 one (no cache_layout), a v1 server
	// with a contract ("{}"). Only for ParallelInfo.
	FaultOtherWire
)

func (f Fault) String() string {
	switch f {
	case NoFault:
		return "none"
	case Fault500:
		return "500"
	case FaultHang:
		return "hang"
	case FaultGarbage:
		return "garbage"
	case FaultOtherWire:
		return "other-wire"
	}
	return "unknown"
}

// BootstrapFault scripts the bootstrap server, per endpoint.
type BootstrapFault struct {
	// ParallelInfo: GET /route?engine_rank=-1&target_dp_group=-1.
	ParallelInfo Fault
	// RankAddress: GET /route for one rank.
	RankAddress Fault
	// Health: GET /health.
	Health Fault
	// HealthSequence, when set, scripts GET /health check by check: the
	// n-th check since the peer started (from 0) is answered with
	// HealthSequence[n % len(HealthSequence)], and Health is not used.
	HealthSequence []Fault
}

// healthFault is the fault for the n-th health check.
func (f BootstrapFault) healthFault(n int64) Fault {
	if len(f.HealthSequence) > 0 {
		return f.HealthSequence[n%int64(len(f.HealthSequence))]
	}
	return f.Health
}

func (b *bootstrapServer) setFault(f BootstrapFault) {
	b.mu.Lock()
	b.fault = f
	b.mu.Unlock()
}

func (b *bootstrapServer) currentFault() BootstrapFault {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fault
}

// injectFault answers r according to f and reports whether it did.
func (b *bootstrapServer) injectFault(w http.ResponseWriter, r *http.Request, f Fault) bool {
	switch f {
	case Fault500:
		text(w, http.StatusInternalServerError, "500 Internal Server Error (injected)")
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-b.stop:
		}
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html><body>upstream proxy error</body></html>"))
	default:
		return false
	}
	return true
}
