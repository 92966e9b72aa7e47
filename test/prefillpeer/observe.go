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
	"sync"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

// SentStatus is a status message a rank sent, and where to.
type SentStatus struct {
	Endpoint string
	Status   kvwire.Status
}

// RankCounts are exact totals, however many records are kept.
type RankCounts struct {
	Registrations int64
	Requests      int64
	// Dummies counts the dummy requests among Requests.
	Dummies int64
	// RoomsCompleted counts rooms whose required_dst_info_num requests
	// arrived, whatever their behaviour.
	RoomsCompleted int64
	StatusesSent   int64
	Errors         int64
}

// ring keeps the last n values in arrival order.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func (r *ring[T]) add(v T, n int) {
	if n <= 0 {
		return
	}
	if len(r.buf) < n {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % n
	r.full = true
}

func (r *ring[T]) snapshot() []T {
	out := make([]T, 0, len(r.buf))
	if r.full {
		out = append(out, r.buf[r.next:]...)
		out = append(out, r.buf[:r.next]...)
		return out
	}
	return append(out, r.buf...)
}

// ContractRegistration is a registration a rank got on the contract wire
// and what it made of it, as the engine's _prepare_decode_registration would.
type ContractRegistration struct {
	Registration kvcontract.Registration
	Accepted     bool
	// Dummy: accepted as decode rank 0's rendezvous with an idle rank.
	Dummy bool
	// ExpectedDecodeRanks are the decode ranks whose pre-allocations this
	// rank collects for a room; Fragments how many it sends this one.
	ExpectedDecodeRanks []int
	Fragments           int
	// Problem says why it was refused.
	Problem error
}

// recorder holds what a rank saw. The rank's goroutines write, tests read.
type recorder struct {
	keep int
	mu   sync.Mutex
	regs []kvv1.Registration // few: one per decode rank and target set
	// contractRegs and preAllocs are the contract wire's (the manifests
	// are not kept: PreAllocation.Manifest is nil).
	contractRegs []ContractRegistration
	preAllocs    ring[kvcontract.PreAllocation]
	reqs         ring[kvv1.Request]
	errs         ring[*RankError]
	sent         ring[SentStatus]
	n            RankCounts
	logf         func(format string, args ...any)
}

func (r *recorder) registration(g kvv1.Registration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Registrations++
	if len(r.regs) < r.keep {
		r.regs = append(r.regs, g)
	}
}

func (r *recorder) contractRegistration(g ContractRegistration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Registrations++
	if len(r.contractRegs) < max(r.keep, 64) {
		g.Registration.Contract = nil
		r.contractRegs = append(r.contractRegs, g)
	}
}

func (r *recorder) preAllocation(p kvcontract.PreAllocation, dummy bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Requests++
	if dummy {
		r.n.Dummies++
	}
	p.Manifest = nil
	r.preAllocs.add(p, r.keep)
}

func (r *recorder) request(q kvv1.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Requests++
	if q.Dummy {
		r.n.Dummies++
	}
	r.reqs.add(q, r.keep)
}

func (r *recorder) roomCompleted() {
	r.mu.Lock()
	r.n.RoomsCompleted++
	r.mu.Unlock()
}

func (r *recorder) sentStatus(s SentStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.StatusesSent++
	r.sent.add(s, r.keep)
}

func (r *recorder) error(e *RankError) {
	if r.logf != nil {
		r.logf("%v", e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Errors++
	// Errors are kept even when requests are not: they are what a test asserts.
	r.errs.add(e, max(r.keep, 64))
}
