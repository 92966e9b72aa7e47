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
	"fmt"
	"sync"
)

// RoomEvent is a room's state after a change of status, pushed to the
// stream that opened it. Ref is the number the stream gave the room when
// it opened it, so that the engine can tell a room from an earlier one of
// the same number.
type RoomEvent struct {
	Ref int64
	RoomStatus
}

// EventSink receives the events of a stream's rooms. Push is called with
// the room's lock held, in the order of the room's changes: it must not
// block (a sink that cannot keep up drops events and later asks for
// Stream.Snapshot).
type EventSink interface {
	Push(RoomEvent)
}

// Stream is an engine's event stream as the Manager sees it: the
// registration its handshake made and the rooms it opened. Every change of
// status of those rooms is pushed to its sink. A stream lives as long as
// its registration is the agent's and its connection holds; when it ends,
// its rooms end with it (failed if unfinished, then forgotten: nobody is
// left to clear them).
type Stream struct {
	m    *Manager
	sink EventSink
	reg  *registration // set by register, under engMu

	endOnce sync.Once
	done    chan struct{}
	// end is why the stream ended; written before done is closed.
	end RoomFailure
}

// OpenStream registers info (as Register does, and ending the rank's
// previous stream whatever its values) for a stream whose room events go
// to sink.
func (m *Manager) OpenStream(info EngineInfo, sink EventSink) (*Stream, Registered, error) {
	s := &Stream{m: m, sink: sink, done: make(chan struct{})}
	got, err := m.register(info, s)
	if err != nil {
		return nil, Registered{}, err
	}
	return s, got, nil
}

// Resynced counts a resync the stream's sink sent (it dropped events).
func (s *Stream) Resynced() { s.m.metrics.streamResynced() }

// Open opens a room owned by the stream; ref comes back in its events.
func (s *Stream) Open(bootstrapAddr string, room, ref int64) error {
	return s.m.open(bootstrapAddr, room, s, ref)
}

// Request sends the request of a room the stream opened as ref.
func (s *Stream) Request(room, ref int64, req TransferRequest) error {
	return s.m.requestRoom(room, req, s, ref)
}

// Clear forgets a room the stream opened as ref.
func (s *Stream) Clear(room, ref int64) error { return s.m.clear(room, s, ref) }

// Done is closed when the stream ended (Err says why).
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended: its code (ReasonStreamReplaced,
// ReasonEngineReregistered, ReasonShutdown, or what Close was given) and a
// sentence. Valid once Done is closed.
func (s *Stream) Err() *RoomFailure { return &s.end }

// Close ends the stream from the engine's side (its connection closed or
// broke, or it stopped reading): the stream's unfinished rooms fail with
// reason, and all of its rooms are forgotten. Closing an ended stream does
// nothing.
func (s *Stream) Close(reason FailureReason, message string) {
	s.m.engMu.Lock()
	defer s.m.engMu.Unlock()
	if s.m.stream == s {
		s.m.stream = nil
	}
	s.m.endStream(s, reason, message)
}

// Snapshot calls fn with the current state of every room the stream has
// open, outside the rooms' locks: what a sink that dropped events sends
// instead of them.
func (s *Stream) Snapshot(fn func(RoomEvent)) {
	var batch []RoomEvent
	for i := range s.m.rooms.shards {
		sh := &s.m.rooms.shards[i]
		sh.mu.Lock()
		for _, e := range sh.rooms {
			if e.owner == s {
				e.sent = e.state.Status()
				batch = append(batch, RoomEvent{Ref: e.ref, RoomStatus: e.status()})
			}
		}
		sh.mu.Unlock()
		for _, ev := range batch {
			fn(ev)
		}
		batch = batch[:0]
	}
}

// endStream ends s once: its unfinished rooms fail with reason, all of
// its rooms are forgotten, and done is closed. The caller holds engMu.
func (m *Manager) endStream(s *Stream, reason FailureReason, message string) {
	s.endOnce.Do(func() {
		s.end = RoomFailure{Reason: reason, Message: message}
		failed, removed := 0, 0
		m.rooms.removeWhere(func(e *roomEntry) bool { return e.owner == s }, func(sh *roomShard, e *roomEntry) {
			removed++
			if sh.fail(e, reason, fmt.Sprintf("%s; room %d (%s) ended with its stream", message, e.id, e.state.Status())) {
				failed++
				m.metrics.roomFailed(reason)
			}
		})
		close(s.done)
		m.metrics.streamEnded()
		if removed > 0 {
			m.log.Info("engine stream ended", "engineRank", m.cfg.EngineRank, "reason", reason, "message", message, "roomsFailed", failed, "roomsForgotten", removed)
		}
	})
}

// publish pushes e's state to the stream that opened it, if its status
// changed since the last push. The caller holds e's shard lock.
func (e *roomEntry) publish() {
	if e.owner == nil {
		return
	}
	if st := e.state.Status(); st != e.sent {
		e.sent = st
		e.owner.sink.Push(RoomEvent{Ref: e.ref, RoomStatus: e.status()})
	}
}

// ended reports whether s is a stream that ended (false for nil: the HTTP
// API's rooms belong to no stream).
func (s *Stream) ended() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
