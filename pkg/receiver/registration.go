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
	"fmt"
)

// registration is one engine registration: the values PUT /v1/engine or a
// stream's handshake gave, numbered so that every room knows which one it
// was opened under (its request carries that registration's session).
type registration struct {
	EngineInfo
	gen uint64
	// engine is what the registration's wire kept of it (validateEngine):
	// the engine's *engineContract on the cache-contract wire, nil on v1.
	engine any
}

// Registered is the answer to a registration.
type Registered struct {
	SessionID string
	// Generation counts the registrations with different values this agent
	// process accepted: 1 for the first.
	Generation uint64
	// Replaced is set when the registration replaced one with other values
	// (an engine that restarted): the rooms of the old one failed with
	// ReasonEngineReregistered.
	Replaced bool
}

// Register records the engine's session and buffer pointers. The same
// values again change nothing. Different values replace the registration:
// an engine restarted with new buffers or a new session. Then every
// unfinished room of the old registration fails (ReasonEngineReregistered),
// the stream of the old registration ends, and what the agent learned from
// bootstrap servers is dropped so that the prefill ranks receive the new
// registration before the next room's request.
func (m *Manager) Register(info EngineInfo) (Registered, error) {
	return m.register(info, nil)
}

// RegisterEngine is Register without the answer.
func (m *Manager) RegisterEngine(info EngineInfo) error {
	_, err := m.Register(info)
	return err
}

// register installs info, for stream s when s is not nil: a new stream
// always ends the one before it (a restarted engine reconnects before the
// agent noticed the old connection die), whatever its values.
func (m *Manager) register(info EngineInfo, s *Stream) (Registered, error) {
	m.engMu.Lock()
	defer m.engMu.Unlock()
	if m.closed.Load() {
		return Registered{}, errorf(CodeAgentShuttingDown, "the agent is shutting down")
	}
	cur := m.engine.Load()
	same := cur != nil && sameEngine(cur.EngineInfo, info)
	reg := cur
	if !same {
		// the caller's buffers may be reused (a pooled request body): what
		// the wire keeps of them must point at the registration's own copy
		info.KVDataPtrs = append([]uint64(nil), info.KVDataPtrs...)
		info.StateDataPtrs = append([]uint64(nil), info.StateDataPtrs...)
		info.Contract = bytes.Clone(info.Contract)
		if err := checkAdmittedTP(&info, m.cfg.EngineRank, m.cfg.DecodeLayout); err != nil {
			return Registered{}, err
		}
		engine, err := validateEngine(info, m.cfg.AdvertiseHost)
		if err != nil {
			return Registered{}, err
		}
		reg = &registration{EngineInfo: info, gen: m.generations + 1, engine: engine}
		if r := m.routing.Load(); r != nil {
			views, err := m.fitViews(reg, r.peers.views)
			if err != nil {
				return Registered{}, err
			}
			if len(views) != len(r.peers.views) {
				m.routing.Store(&routing{view: r.view, peers: newPeerTable(views)})
			}
		}
		m.generations++
		m.engine.Store(reg)
	}
	if old := m.stream; old != nil && (s != nil || !same) {
		m.stream = nil
		code, msg := ReasonStreamReplaced, fmt.Sprintf("engine rank %d opened a new stream (session %s)", m.cfg.EngineRank, info.SessionID)
		if !same {
			code, msg = ReasonEngineReregistered, fmt.Sprintf("the engine of rank %d registered again with other values (session %s → %s)", m.cfg.EngineRank, cur.SessionID, info.SessionID)
		}
		m.endStream(old, code, msg)
	}
	if s != nil {
		s.reg = reg
		m.stream = s
		m.metrics.streamOpened()
	}
	out := Registered{SessionID: reg.SessionID, Generation: reg.gen, Replaced: cur != nil && !same}
	if out.Replaced {
		m.replaced(cur, reg)
	}
	return out, nil
}

// EngineContract is the cache transfer contract the engine registered
// (EngineInfo.Contract), nil when no engine registered one. The bytes are
// the registration's own: callers must not modify them.
func (m *Manager) EngineContract() []byte {
	if reg := m.engine.Load(); reg != nil {
		return reg.Contract
	}
	return nil
}

// replaced fails the unfinished rooms of registrations before reg and
// drops the peer caches, so that the next room of every prefill address
// registers reg with its ranks again.
func (m *Manager) replaced(old, reg *registration) {
	if r := m.routing.Load(); r != nil {
		m.routing.Store(&routing{view: r.view, peers: newPeerTable(r.peers.views)})
	}
	m.rooms.each(func(s *roomShard, e *roomEntry) {
		if e.reg != reg && s.fail(e, ReasonEngineReregistered, fmt.Sprintf(
			"the engine of rank %d registered again with other buffers or session (%s → %s) while room %d was %s; rooms of the old registration cannot complete",
			m.cfg.EngineRank, old.SessionID, reg.SessionID, e.id, e.state.Status())) {
			m.metrics.roomFailed(ReasonEngineReregistered)
		}
	})
	m.log.Warn("engine registration replaced: rooms of the old one failed, prefill ranks get the new one", "engineRank", m.cfg.EngineRank,
		"oldSession", old.SessionID, "newSession", reg.SessionID, "generation", reg.gen)
}
