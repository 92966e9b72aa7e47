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
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// Manager is one engine rank registered with its agent: the Go
// counterpart of the Python AgentKVManager, and of the reference decode
// engine's KV manager as far as its receivers use it.
//
// Its registration opens the rank's event stream: receivers open, request
// and clear their rooms on it without waiting for answers, and one
// goroutine applies the agent's events to the receivers, whose Poll reads
// their state and makes no call. When the stream ends, the rooms that had
// not finished fail (FailureAgentStreamLost, or the agent's own code when
// it said why) and the manager connects and registers again by itself,
// unless another engine took the rank.
type Manager struct {
	client *Client
	info   receiver.EngineInfo

	connecting sync.Mutex // serialises connection attempts (made without mu)
	mu         sync.Mutex // guards what follows
	conn       *streamConn
	rooms      map[int64]*Receiver
	nextRef    int64
	replacedBy string // why another engine has the rank; no reconnecting until Register
	lastLoss   string
	closed     bool
	changed    chan struct{} // wakes the reconnecting loop

	connects, streamsLost, unknownEvents, resyncs atomic.Int64
}

// NewManager registers the engine rank's session and buffers with the
// agent behind client, opening the rank's event stream.
func NewManager(ctx context.Context, client *Client, info receiver.EngineInfo) (*Manager, error) {
	m := &Manager{client: client, info: info, rooms: map[int64]*Receiver{}, nextRef: 1, changed: make(chan struct{}, 1)}
	if err := m.connect(ctx); err != nil {
		return nil, err
	}
	go m.reconnect()
	return m, nil
}

// Client is the manager's connection to its agent.
func (m *Manager) Client() *Client { return m.client }

// SessionID is the engine rank's transfer-engine session ("host:port").
func (m *Manager) SessionID() string { return m.info.SessionID }

// Register registers the rank again: it opens the stream if it is down
// (also after another engine took the rank: this takes it back).
func (m *Manager) Register(ctx context.Context) error {
	err := m.connect(ctx)
	return err
}

// Close ends the stream (the agent forgets the rank's rooms).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	conn := m.conn
	m.conn = nil
	m.mu.Unlock()
	m.wake()
	if conn != nil {
		conn.close()
	}
}

// StreamStats are counts of what the manager's stream saw, for tests and
// troubleshooting.
type StreamStats struct {
	Connects, StreamsLost, UnknownEvents, Resyncs int64
	LastLoss, ReplacedBy                          string
}

func (m *Manager) Stats() StreamStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return StreamStats{Connects: m.connects.Load(), StreamsLost: m.streamsLost.Load(), UnknownEvents: m.unknownEvents.Load(),
		Resyncs: m.resyncs.Load(), LastLoss: m.lastLoss, ReplacedBy: m.replacedBy}
}

// connect opens the stream unless it is open.
func (m *Manager) connect(ctx context.Context) error {
	m.connecting.Lock()
	defer m.connecting.Unlock()
	m.mu.Lock()
	up, closed := m.conn != nil, m.closed
	m.mu.Unlock()
	if up || closed {
		return nil
	}
	conn, err := m.client.openStream(ctx, m.info)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		conn.close()
		return nil
	}
	m.conn, m.replacedBy = conn, ""
	m.connects.Add(1)
	m.mu.Unlock()
	go m.read(conn)
	return nil
}

func (m *Manager) wake() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// reconnect connects again after the stream ended, with a growing wait,
// until the manager closes; not while another engine has the rank.
func (m *Manager) reconnect() {
	const first, most = 20 * time.Millisecond, time.Second
	wait := first
	for {
		m.mu.Lock()
		closed, down, replaced := m.closed, m.conn == nil, m.replacedBy != ""
		m.mu.Unlock()
		switch {
		case closed:
			return
		case !down || replaced:
			<-m.changed
			wait = first
			continue
		}
		if err := m.connect(context.Background()); err != nil {
			select {
			case <-m.changed:
			case <-time.After(wait):
			}
			wait = min(2*wait, most)
		}
	}
}

// read applies the stream's events until it ends.
func (m *Manager) read(conn *streamConn) {
	for {
		line, err := conn.readLine()
		var ev localapi.StreamEvent
		if err == nil {
			ev, err = localapi.DecodeEvent(line)
			if err != nil {
				err = fmt.Errorf("the agent sent a line that is not an event: %w", err)
			}
		}
		if err != nil {
			m.lost(conn, conn.why(err))
			return
		}
		m.apply(conn, &ev)
	}
}

func (m *Manager) apply(conn *streamConn, ev *localapi.StreamEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if conn != m.conn {
		return
	}
	switch ev.Ev {
	case localapi.EvRoom:
		r := m.rooms[*ev.Room]
		if r == nil || r.ref != ev.Ref || r.conn != conn {
			m.unknownEvents.Add(1)
			return
		}
		r.observe(ev)
	case localapi.EvRefused:
		m.refused(conn, ev)
	case localapi.EvResync:
		m.resyncs.Add(1)
	case localapi.EvClosed:
		conn.closedBy = ev
	}
}

// refused fails the room whose operation the agent refused, with the
// error the HTTP call would have returned.
func (m *Manager) refused(conn *streamConn, ev *localapi.StreamEvent) {
	if ev.Room == nil {
		m.unknownEvents.Add(1)
		return
	}
	r := m.rooms[*ev.Room]
	switch {
	case r == nil || r.ref != ev.Ref || r.conn != conn:
		m.unknownEvents.Add(1) // a clear's refusal too: the room is gone here already
		return
	case ev.Op == localapi.OpRequest && ev.Code == string(receiver.CodeRoomFinished):
		return // the room's own status says how it ended
	}
	call := "POST /v1/rooms"
	if ev.Op == localapi.OpRequest {
		call = "POST " + roomPath(r.room) + "/request"
	}
	r.failLocally(FailureAgentRefused, (&APIError{Call: call, HTTPStatus: ev.HTTPStatus, Code: ev.Code, Message: ev.Message}).Error())
}

// lost ends conn: every room it carried that had not finished fails, since
// no event about it can come any more.
func (m *Manager) lost(conn *streamConn, why string) {
	conn.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if conn != m.conn {
		return
	}
	m.conn = nil
	m.streamsLost.Add(1)
	m.lastLoss = why
	if by := conn.closedBy; by != nil && (by.Code == string(receiver.ReasonStreamReplaced) || by.Code == string(receiver.ReasonEngineReregistered)) {
		m.replacedBy = by.Code + ": " + by.Message
	}
	for _, r := range m.rooms {
		if st := r.Status(); r.conn == conn && !st.Finished() {
			r.failLocally(FailureAgentStreamLost, fmt.Sprintf("the event stream to the pdtopo agent at %s ended (%s) while room %d was %v: its outcome is unknown (rooms do not outlive the stream)",
				m.client.endpoint, why, r.room, st))
		}
	}
	m.wake()
}

// open puts r in the table and sends its open, or fails it.
func (m *Manager) open(ctx context.Context, r *Receiver) {
	m.mu.Lock()
	replacedBy, down := m.replacedBy, m.conn == nil && !m.closed
	m.mu.Unlock()
	if replacedBy != "" {
		r.failLocally(FailureAgentRefused, fmt.Sprintf("pdtopo agent at %s: another engine registered on this rank (%s); Manager.Register takes the rank back", m.client.endpoint, replacedBy))
		return
	}
	if down {
		if err := m.connect(ctx); err != nil {
			code := FailureAgentRefused
			var ue *UnavailableError
			if errors.As(err, &ue) {
				code = FailureAgentUnavailable
			}
			r.failLocally(code, err.Error())
			return
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.conn == nil:
		r.failLocally(FailureAgentUnavailable, fmt.Sprintf("pdtopo agent at %s: the stream is closed (%s)", m.client.endpoint, m.lastLoss))
		return
	case m.rooms[r.room] != nil:
		r.failLocally(FailureAgentRefused, (&APIError{Call: "POST /v1/rooms", HTTPStatus: 409, Code: string(receiver.CodeRoomExists),
			Message: fmt.Sprintf("room %d is already open; clear it before reusing its number", r.room)}).Error())
		return
	}
	r.ref, r.conn = m.nextRef, m.conn
	m.nextRef++
	m.rooms[r.room] = r
	r.conn.send(openLine(r.room, r.ref, r.bootstrapAddr))
}

func (m *Manager) request(r *Receiver, req Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rooms[r.room] != r || r.conn != m.conn || r.conn == nil || r.Status() == receiver.Failed {
		return
	}
	if req.Manifest == nil {
		r.conn.send(requestLine(r.room, r.ref, req))
		return
	}
	line, err := contractRequestLine(r.room, r.ref, req.Manifest)
	if err != nil { // the agent would refuse it the same way
		r.failLocally(string(receiver.ReasonManifestRefused), err.Error())
		return
	}
	r.conn.send(line)
}

func (m *Manager) clear(r *Receiver) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rooms[r.room] != r {
		return
	}
	delete(m.rooms, r.room)
	if r.conn != nil && r.conn == m.conn {
		r.conn.send(clearLine(r.room, r.ref))
	}
}
