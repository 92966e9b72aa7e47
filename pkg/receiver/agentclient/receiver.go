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
	"errors"
	"sync"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// Manager is one engine rank registered with its agent: the Go
// counterpart of the Python AgentKVManager, and of the reference decode
// engine's KV manager as far as its receivers use it.
type Manager struct {
	client *Client
	info   receiver.EngineInfo
}

// NewManager registers the engine rank's session and buffers with the
// agent behind client.
func NewManager(ctx context.Context, client *Client, info receiver.EngineInfo) (*Manager, error) {
	if err := client.RegisterEngine(ctx, info); err != nil {
		return nil, err
	}
	return &Manager{client: client, info: info}, nil
}

// Client is the manager's connection to its agent.
func (m *Manager) Client() *Client { return m.client }

// SessionID is the engine rank's transfer-engine session ("host:port").
func (m *Manager) SessionID() string { return m.info.SessionID }

// Receiver is one room on the decode side, with the calling order of the
// reference's decode receiver: construct (NewReceiver), Poll until it left
// Bootstrapping, Prefill, Poll until Success or Failed, Clear; Failure
// after a failed poll. It is used by one goroutine at a time, like the
// reference's receivers by their scheduler.
type Receiver struct {
	m             *Manager
	bootstrapAddr string
	room          int64

	mu sync.Mutex
	// last is the agent's latest answer about the room.
	last Room
	// local is a failure the agent did not report (it was unreachable or
	// refused a call): the room is Failed for the engine.
	local *TransferError
	// concluded is set once Poll returned Success or Failed; later polls
	// answer it without calling the agent, as the reference's do.
	concluded bool
}

// NewReceiver opens room against the prefill at bootstrapAddr. It does not
// wait for the bootstrap: Poll says Bootstrapping until the agent reached
// the prefill. An agent that restarted since NewManager (it answers
// EngineNotRegistered) is registered with again first. A refused or unreachable agent fails the room (Poll says
// Failed, Failure says why) rather than returning an error, as the
// reference's receiver records its bootstrap failures.
func (m *Manager) NewReceiver(ctx context.Context, bootstrapAddr string, room int64) *Receiver {
	r := &Receiver{m: m, bootstrapAddr: bootstrapAddr, room: room}
	r.last = Room{Room: room, Status: receiver.Bootstrapping, BootstrapToken: -1}
	got, err := m.client.Open(ctx, bootstrapAddr, room)
	if CodeOf(err) == string(receiver.CodeEngineNotRegistered) {
		// the agent restarted since NewManager: register again, then open
		if err = m.client.RegisterEngine(ctx, m.info); err == nil {
			got, err = m.client.Open(ctx, bootstrapAddr, room)
		}
	}
	r.record(got, err)
	return r
}

// BootstrapRoom is the room's number.
func (r *Receiver) BootstrapRoom() int64 { return r.room }

// BootstrapAddr is the prefill's bootstrap address the room was opened with.
func (r *Receiver) BootstrapAddr() string { return r.bootstrapAddr }

// record keeps an answer, or turns a failed call into the room's failure.
func (r *Receiver) record(got Room, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.last = got
		return
	}
	if r.local != nil {
		return
	}
	code := FailureAgentRefused
	var ue *UnavailableError
	if errors.As(err, &ue) {
		code = FailureAgentUnavailable
	}
	r.local = &TransferError{BootstrapRoom: r.room, FailureCode: code, FailureReason: err.Error(), RemoteEndpoint: r.bootstrapAddr}
}

// Prefill sends the room's request: the pages to fill (KVIndices), the
// request's aux slot, the decode prefix length and the state slots. Sent
// while the room is still Bootstrapping, the agent queues it.
func (r *Receiver) Prefill(ctx context.Context, req Request) {
	if r.failedLocally() {
		return
	}
	got, err := r.m.client.Request(ctx, r.room, req)
	if CodeOf(err) == string(receiver.CodeRoomFinished) {
		// the room failed (or succeeded) before its request: its own
		// status says how, which the next poll reads
		return
	}
	r.record(got, err)
}

func (r *Receiver) failedLocally() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local != nil
}

// Poll returns the room's status (a receiver.TransferPoll). It never
// returns an error: an unreachable agent fails the room.
func (r *Receiver) Poll(ctx context.Context) receiver.TransferPoll {
	r.mu.Lock()
	if r.concluded {
		defer r.mu.Unlock()
		return r.statusLocked()
	}
	r.mu.Unlock()
	if !r.failedLocally() {
		got, err := r.m.client.Room(ctx, r.room)
		r.record(got, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.statusLocked()
	r.concluded = st == receiver.Success || st == receiver.Failed
	return st
}

func (r *Receiver) statusLocked() receiver.TransferPoll {
	if r.local != nil {
		return receiver.Failed
	}
	return r.last.Status
}

// BootstrapToken is the first token the prefill generated, -1 if none
// (valid after Poll returned Success).
func (r *Receiver) BootstrapToken() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.BootstrapToken
}

// SpecCandidateIDs are the prefill's speculative candidates (after
// Success), nil when the plan does not let the engine use them.
func (r *Receiver) SpecCandidateIDs() []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.SpecCandidateIDs
}

// Clear forgets the room in the agent. Clearing twice, or a room the agent
// no longer knows, is fine.
func (r *Receiver) Clear(ctx context.Context) error {
	err := r.m.client.Clear(ctx, r.room)
	if CodeOf(err) == string(receiver.CodeRoomNotFound) {
		return nil
	}
	return err
}

// Failure marks the room failed, clears it, and returns why it failed as
// the reference's KVTransferError says it: the agent's reason when the
// room failed on this rank, the client's when the agent could not be
// reached or refused, and FailureOnAnotherRank when only another rank's room
// failed (the engine's ranks agree on a room's fate).
func (r *Receiver) Failure(ctx context.Context) *TransferError {
	r.mu.Lock()
	local, last := r.local, r.last
	r.mu.Unlock()
	if local == nil && last.Status != receiver.Failed {
		// the engine learnt of the failure elsewhere; the agent may know more
		if got, err := r.m.client.Room(ctx, r.room); err == nil {
			last = got
		}
	}
	fe := local
	switch {
	case fe != nil:
	case last.Status == receiver.Failed:
		fe = &TransferError{BootstrapRoom: r.room, FailureCode: last.FailureCode, FailureReason: last.FailureMessage, RemoteEndpoint: r.bootstrapAddr}
	default:
		fe = &TransferError{BootstrapRoom: r.room, FailureCode: FailureOnAnotherRank,
			FailureReason: "Failed due to an unknown reason from another rank", RemoteEndpoint: r.bootstrapAddr}
	}
	r.mu.Lock()
	if r.local == nil && !(r.concluded && r.last.Status == receiver.Success) {
		r.local = fe
	}
	r.concluded = true
	r.mu.Unlock()
	_ = r.Clear(ctx)
	return fe
}
