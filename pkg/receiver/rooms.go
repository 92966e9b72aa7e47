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

package receiver

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
)

// TransferRequest is what the engine sends once a room is bootstrapped
// (the wires' vocabulary, wire.TransferRequest).
type TransferRequest = wire.TransferRequest

// RoomStatus is what the engine polls.
type RoomStatus struct {
	Room   int64
	Status TransferPoll
	// BootstrapToken is the first generated token (-1 if none was reported).
	BootstrapToken int64
	// SpecCandidateIDs are reported only when the plan lets the engine use
	// them (identity and MLA plans), as the reference decode does.
	SpecCandidateIDs []int32
	Failure          *RoomFailure
}

// Open starts a room against a prefill's bootstrap address. With the
// address and dp group already known it is bootstrapped before Open
// returns; otherwise it is Bootstrapping until the bootstrap server
// answered (poll Status). Failures to reach the prefill fail the room, not
// the call.
func (m *Manager) Open(bootstrapAddr string, room int64) error {
	return m.open(bootstrapAddr, room, nil, 0)
}

// open opens a room for owner (nil for the HTTP API), which calls it ref.
func (m *Manager) open(bootstrapAddr string, room int64, owner *Stream, ref int64) error {
	if err := m.Ready(); err != nil {
		return err
	}
	if room < 0 {
		return errorf(CodeInvalidArgument, "room %d is negative", room)
	}
	if err := checkBootstrapAddr(bootstrapAddr); err != nil {
		return errorf(CodeInvalidArgument, "%v", err)
	}
	r, reg := m.routing.Load(), m.engine.Load()
	if owner != nil && owner.reg != reg {
		return errorf(CodeStreamEnded, "the stream's registration was replaced; open a new stream")
	}
	now := m.now()
	view := r.peers.viewOf(bootstrapAddr)
	e := &roomEntry{id: room, view: view, addr: bootstrapAddr, group: -1, openedAt: now,
		state: NewRoomState(view.expected, view.required), reg: reg, owner: owner, ref: ref, sent: Bootstrapping}
	switch exists, full := m.rooms.insert(e, now); {
	case exists:
		return errorf(CodeRoomExists, "room %d is already open; clear it before reusing its number", room)
	case full:
		return errorf(CodeTooManyRooms, "%d rooms are open on engine rank %d, the most it keeps (--max-rooms, by default derived from the container's memory limit); clear finished rooms", m.cfg.MaxRooms, m.cfg.EngineRank)
	}
	if m.engine.Load() != reg || owner.ended() {
		// a registration or the end of the stream raced with this open: the
		// room belongs to what was replaced
		m.rooms.removeEntry(e)
		return errorf(CodeStreamEnded, "the engine registration or its stream ended while room %d was being opened", room)
	}
	res := r.peers.bind(e, now)
	if res.adopt != nil { // the address's plan set became known since viewOf
		m.adoptView(e, res.adopt)
		res = r.peers.bind(e, now)
	}
	switch {
	case res.refusal != nil:
		m.failRoom(e, res.refusal.Reason, res.refusal.Message)
	case res.endpoints != nil:
		m.bootstrapped(e, res.group, res.endpoints)
	case res.startResolver:
		m.startResolver(r.peers, res.addr)
	}
	return nil
}

// Request sends a room's request to every rank of its plan. A room still
// Bootstrapping keeps the request and sends it the moment it bootstraps (or
// fails with the bootstrap's reason), so the engine need not poll between
// Open and Request. A send that fails fails the room (its reason says which
// rank).
func (m *Manager) Request(room int64, req TransferRequest) error {
	return m.requestRoom(room, req, nil, 0)
}

// requestRoom is Request for the room owner opened as ref (any room when
// owner is nil).
func (m *Manager) requestRoom(room int64, req TransferRequest, owner *Stream, ref int64) error {
	var (
		e    *roomEntry
		perr error
	)
	now := m.now()
	found := m.rooms.with(room, func(s *roomShard, entry *roomEntry) {
		if owner != nil && (entry.owner != owner || entry.ref != ref) {
			perr = m.notOnStream(room, ref)
			return
		}
		if perr = requestable(entry); perr == nil {
			perr = entry.view.wire.CheckRequest(m.host(), entry, &req) // the room's wire checks what it would send
		}
		switch {
		case perr != nil && CodeOf(perr) == CodeManifestRefused:
			// the room cannot succeed with this manifest: it fails, and its
			// deadline and waiters are released at once
			if s.fail(entry, ReasonManifestRefused, perr.(*Error).Message) {
				m.metrics.roomFailed(ReasonManifestRefused)
			}
		case perr != nil:
		case entry.state.Status() == Bootstrapping:
			if req.Manifest != nil {
				req.Manifest = bytes.Clone(req.Manifest)
			}
			entry.pending = &req // sent by bootstrapped, under this lock
		default:
			s.markRequested(entry, now) // before sending: answers may beat the send's return
			e = entry
		}
	})
	if !found {
		return m.roomNotFound(room)
	}
	if perr != nil || e == nil {
		return perr
	}
	e.view.wire.SendRequest(m.host(), e, &req)
	return nil
}

// requestable says why a room cannot take its request now, if it cannot.
func requestable(e *roomEntry) error {
	st := e.state.Status()
	switch {
	case st == Failed:
		return errorf(CodeRoomFinished, "room %d already failed: %s", e.id, e.state.Failure().Message)
	case st == Success:
		return errorf(CodeRoomFinished, "room %d already succeeded", e.id)
	case e.state.Requested() || e.pending != nil:
		return errorf(CodeRoomAlreadyRequested, "room %d's request was already sent (or queued until it bootstraps)", e.id)
	}
	return nil
}

// Status reports a room. A room past its deadline is failed here too, so
// the answer never waits for the sweeper.
func (m *Manager) Status(room int64) (RoomStatus, error) {
	var st RoomStatus
	now := m.now()
	found := m.rooms.with(room, func(s *roomShard, e *roomEntry) {
		if e.list != nil && e.deadline <= now {
			l := e.list
			if s.fail(e, l.reason, m.timeoutMessage(e, l)) {
				m.metrics.roomFailed(l.reason)
			}
		}
		st = e.status()
	})
	if !found {
		return RoomStatus{}, m.roomNotFound(room)
	}
	return st, nil
}

// status is the room as the engine sees it; the caller holds its lock.
func (e *roomEntry) status() RoomStatus {
	st := RoomStatus{Room: e.id, Status: e.state.Status(), BootstrapToken: e.state.BootstrapToken(), Failure: e.state.Failure()}
	if e.view.specOK {
		st.SpecCandidateIDs = e.state.SpecCandidates()
	}
	return st
}

// Wait blocks until room finishes (or is cleared, or ctx ends) and returns
// its status. It lets an engine, or the local API's long poll, learn of
// completion without polling.
func (m *Manager) Wait(ctx context.Context, room int64) (RoomStatus, error) {
	var ch chan struct{}
	found := m.rooms.with(room, func(s *roomShard, e *roomEntry) {
		if e.unfinished() {
			if e.done == nil {
				e.done = make(chan struct{})
			}
			ch = e.done
		}
	})
	if !found {
		return RoomStatus{}, m.roomNotFound(room)
	}
	if ch != nil { // the sweeper wakes it when a deadline passes, Close when the agent stops
		done := m.metrics.waiting()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		done()
	}
	return m.Status(room)
}

// Clear forgets a room entirely; status messages for it are ignored from
// then on.
func (m *Manager) Clear(room int64) error { return m.clear(room, nil, 0) }

// clear is Clear for the room owner opened as ref (any room when owner is
// nil).
func (m *Manager) clear(room int64, owner *Stream, ref int64) error {
	e, other := m.rooms.remove(room, owner, ref)
	switch {
	case other:
		return m.notOnStream(room, ref)
	case e == nil:
		return m.roomNotFound(room)
	}
	if e.unfinished() {
		m.metrics.roomAbandoned()
	}
	return nil
}

// bootstrapped moves a waiting room to Bootstrapped in dp group g, and
// sends the request the engine queued while it was Bootstrapping.
func (m *Manager) bootstrapped(e *roomEntry, g int, endpoints []string) {
	now := m.now()
	var queued *TransferRequest
	m.rooms.withEntry(e, func(s *roomShard) {
		if e.state.Status() == Bootstrapping {
			e.group, e.endpoints = g, endpoints
			s.markBootstrapped(e, now)
			if e.pending != nil && s.markRequested(e, now) {
				queued = e.pending
			}
			e.pending = nil
		}
	})
	if queued != nil {
		e.view.wire.SendRequest(m.host(), e, queued)
	}
}

// failRoom fails a room that is still open and unfinished.
func (m *Manager) failRoom(e *roomEntry, reason FailureReason, message string) {
	failed := false
	m.rooms.withEntry(e, func(s *roomShard) { failed = s.fail(e, reason, message) })
	if failed {
		m.metrics.roomFailed(reason)
		m.log.Debug("room failed", "room", e.id, "reason", reason, "message", message)
	}
}

// timeoutMessage says which deadline a room missed and where it stood.
func (m *Manager) timeoutMessage(e *roomEntry, l *deadlineList) string {
	if l.reason == ReasonBootstrapTimeout {
		return fmt.Sprintf("room %d did not finish bootstrapping with %s within %v", e.id, e.addr, time.Duration(l.timeout))
	}
	what := "its request was not sent"
	if e.state.Requested() {
		what = fmt.Sprintf("%d of %d prefill ranks reported Success", e.state.Responses(), e.view.required)
	}
	return fmt.Sprintf("room %d did not finish within %v in state %s (prefill %s): %s", e.id, time.Duration(l.timeout), e.state.Status(), e.addr, what)
}

// notOnStream is the answer to a stream's call for a room another stream,
// or the HTTP API, opened, or that the stream opened under another ref.
func (m *Manager) notOnStream(room, ref int64) error {
	return errorf(CodeRoomNotFound, "room %d is not open on this stream with ref %d (another stream or the HTTP API opened it, or the stream opened it again since)", room, ref)
}

// roomNotFound is the answer for a room this process does not hold: never
// opened here, cleared, or opened before the agent restarted (rooms do not
// survive a restart; the engine must treat such a room as failed).
func (m *Manager) roomNotFound(room int64) error {
	return errorf(CodeRoomNotFound, "room %d is not open in this agent (running since %s): it was cleared, never opened, or opened before the agent restarted; rooms do not survive a restart, treat it as failed",
		room, m.start.UTC().Format(time.RFC3339))
}
