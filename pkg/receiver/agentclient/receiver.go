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

package agentclient

import (
	"context"
	"sync/atomic"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// Receiver is one room on the decode side, with the calling order of the
// reference's decode receiver: construct (NewReceiver), Poll until it left
// Bootstrapping, Prefill, Poll until Success or Failed, Clear; Failure
// after a failed poll. It is used by one goroutine at a time, like the
// reference's receivers by their scheduler; the manager's reader updates
// it meanwhile.
type Receiver struct {
	m             *Manager
	bootstrapAddr string
	room          int64
	// ref and conn are the stream's number for this opening of the room
	// and the stream it was opened on; set once, under m.mu.
	ref  int64
	conn *streamConn

	// status is what Poll reads (a receiver.TransferPoll): it only moves
	// up, and Success and Failed are final.
	status atomic.Int32
	// concluded is set once Poll returned Success or Failed.
	concluded atomic.Bool
	// Guarded by m.mu: the agent's latest event about the room, and a
	// failure the agent did not report (it refused a call, or could not be
	// reached): the room is Failed for the engine.
	last  Room
	local *TransferError
}

// NewReceiver opens room against the prefill at bootstrapAddr, on the
// rank's stream. It waits neither for the bootstrap nor for the agent's
// answer: Poll says Bootstrapping until the agent reached the prefill, and
// a refused or unreachable agent fails the room (Poll says Failed, Failure
// says why), as the reference's receiver records its bootstrap failures.
// ctx bounds connecting again when the stream is down.
func (m *Manager) NewReceiver(ctx context.Context, bootstrapAddr string, room int64) *Receiver {
	r := &Receiver{m: m, bootstrapAddr: bootstrapAddr, room: room}
	r.last = Room{Room: room, Status: receiver.Bootstrapping, BootstrapToken: -1}
	r.status.Store(int32(receiver.Bootstrapping))
	m.open(ctx, r)
	return r
}

// BootstrapRoom is the room's number.
func (r *Receiver) BootstrapRoom() int64 { return r.room }

// BootstrapAddr is the prefill's bootstrap address the room was opened with.
func (r *Receiver) BootstrapAddr() string { return r.bootstrapAddr }

// Status is the room's status as the agent last reported it (what Poll
// answers, without concluding the room).
func (r *Receiver) Status() receiver.TransferPoll { return receiver.TransferPoll(r.status.Load()) }

// observe applies a room event; the caller holds m.mu.
func (r *Receiver) observe(ev *localapi.StreamEvent) {
	cur, next := r.Status(), *ev.Status
	if cur.Finished() || next != receiver.Failed && next <= cur {
		return
	}
	r.last = Room{Room: r.room, Status: next, BootstrapToken: ev.BootstrapToken, SpecCandidateIDs: ev.SpecCandidateIDs}
	if ev.FailureCode != nil {
		r.last.FailureCode = *ev.FailureCode
	}
	if ev.FailureMessage != nil {
		r.last.FailureMessage = *ev.FailureMessage
	}
	r.status.Store(int32(next))
}

// failLocally records a failure the agent did not report; the caller
// holds m.mu, or r is not in the table yet.
func (r *Receiver) failLocally(code, reason string) {
	if r.Status().Finished() {
		return
	}
	if r.local == nil {
		r.local = &TransferError{BootstrapRoom: r.room, FailureCode: code, FailureReason: reason, RemoteEndpoint: r.bootstrapAddr}
	}
	r.status.Store(int32(receiver.Failed))
}

// Prefill sends the room's request: the pages to fill (KVIndices), the
// request's aux slot, the decode prefix length and the state slots. Sent
// while the room is still Bootstrapping, the agent queues it. It does not
// wait for the agent: a refusal fails the room.
func (r *Receiver) Prefill(_ context.Context, req Request) {
	if !r.Status().Finished() {
		r.m.request(r, req)
	}
}

// Poll returns the room's status (a receiver.TransferPoll), read from what
// the agent's events said: it makes no call and never returns an error.
func (r *Receiver) Poll(context.Context) receiver.TransferPoll {
	st := r.Status()
	if st.Finished() && !r.concluded.Load() {
		r.concluded.Store(true)
	}
	return st
}

// BootstrapToken is the first token the prefill generated, -1 if none
// (valid after Poll returned Success).
func (r *Receiver) BootstrapToken() int64 {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.last.BootstrapToken
}

// SpecCandidateIDs are the prefill's speculative candidates (after
// Success), nil when the plan does not let the engine use them.
func (r *Receiver) SpecCandidateIDs() []int32 {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.last.SpecCandidateIDs
}

// Clear forgets the room, here and in the agent. Clearing twice, or a
// room the agent no longer knows, is fine.
func (r *Receiver) Clear(context.Context) error {
	r.m.clear(r)
	return nil
}

// Failure marks the room failed, clears it, and returns why it failed as
// the reference's KVTransferError says it: the agent's reason when the
// room failed on this rank, the client's when the agent could not be
// reached or refused, and FailureOnAnotherRank when only another rank's room
// failed (the engine's ranks agree on a room's fate).
func (r *Receiver) Failure(ctx context.Context) *TransferError {
	r.m.mu.Lock()
	fe := r.local
	switch {
	case fe != nil:
	case r.last.Status == receiver.Failed:
		fe = &TransferError{BootstrapRoom: r.room, FailureCode: r.last.FailureCode, FailureReason: r.last.FailureMessage, RemoteEndpoint: r.bootstrapAddr}
	default:
		fe = &TransferError{BootstrapRoom: r.room, FailureCode: FailureOnAnotherRank,
			FailureReason: "Failed due to an unknown reason from another rank", RemoteEndpoint: r.bootstrapAddr}
	}
	if r.local == nil && !(r.concluded.Load() && r.Status() == receiver.Success) {
		r.local = fe
		r.status.Store(int32(receiver.Failed))
	}
	r.concluded.Store(true)
	r.m.mu.Unlock()
	_ = r.Clear(ctx)
	return fe
}
