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
	"strings"

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
)

// resolve is the one goroutine working for a bootstrap address: it fetches
// the parallel info, then each waiting dp group's rank addresses and sends
// the registrations, handing waiting rooms on as each step finishes. It
// exits when no room waits, so no goroutine lingers per room or address.
func (m *Manager) resolve(t *peerTable, pa *peerAddr) {
	defer m.wg.Done()
	for {
		needInfo, group, ok := t.nextWork(pa)
		switch {
		case !ok:
			return
		case needInfo:
			m.resolveInfo(t, pa)
		default:
			m.resolveGroup(t, pa, group)
		}
	}
}

// nextWork says what the resolver of pa must do next, or clears its
// resolving flag and reports false when nothing waits.
func (t *peerTable) nextWork(pa *peerAddr) (needInfo bool, group int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pa.info == nil && len(pa.waiting) > 0 {
		return true, 0, true
	}
	for g, grp := range pa.groups {
		if grp.endpoints == nil && len(grp.waiting) > 0 {
			return false, g, true
		}
	}
	pa.resolving = false
	if pa.info == nil && pa.refusal == nil && t.attached(pa) {
		delete(t.addrs, pa.addr) // nothing learned: keep no entry for it
	}
	return false, 0, false
}

// resolveInfo fetches and checks the parallel info of pa's address.
func (m *Manager) resolveInfo(t *peerTable, pa *peerAddr) {
	info, view, failure := m.fetchPrefillInfo(t.views, pa.addr)
	now := m.now()
	t.mu.Lock()
	waiting := pa.waiting
	pa.waiting = nil
	switch {
	case !t.attached(pa):
		waiting = nil // its address was dropped meanwhile: the heartbeat failed these rooms
	case failure != nil && refusesAddress(failure):
		pa.refusal, pa.refusedUntil = failure, now+int64(m.cfg.HeartbeatInterval)
	case failure == nil:
		pa.info, pa.view = info, view
		for _, e := range waiting { // hand rooms on to their dp groups, on the set the prefill picked
			if e.view != view {
				m.adoptView(e, view) // takes the room's shard lock under t.mu, as nothing takes them the other way
			}
			grp := pa.group(dpGroup(e.id, info.DPSize))
			grp.waiting = append(grp.waiting, e)
		}
		waiting = nil
	}
	t.mu.Unlock()
	for _, e := range waiting {
		m.failRoom(e, failure.Reason, failure.Message)
	}
	if failure != nil && len(waiting) > 0 {
		m.log.Warn("bootstrap address refused", "addr", pa.addr, "reason", failure.Reason, "message", failure.Message, "rooms", len(waiting))
	}
}

// resolveGroup fetches the address of every rank the plan sends to in dp
// group g and registers this decode rank with each, then bootstraps the
// rooms waiting for g. A failure fails those rooms only; the next room for
// g tries again.
func (m *Manager) resolveGroup(t *peerTable, pa *peerAddr, g int) {
	endpoints, failure := m.connectGroup(pa.view, pa.addr, g)
	t.mu.Lock()
	grp := pa.group(g)
	waiting := grp.waiting
	grp.waiting = nil
	if failure == nil && t.attached(pa) {
		grp.endpoints = endpoints
	}
	t.mu.Unlock()
	for _, e := range waiting {
		if failure != nil {
			m.failRoom(e, failure.Reason, failure.Message)
		} else {
			m.bootstrapped(e, g, endpoints)
		}
	}
	if failure != nil {
		m.log.Warn("prefill dp group unavailable", "addr", pa.addr, "dpGroup", g, "reason", failure.Reason, "message", failure.Message, "rooms", len(waiting))
	}
}

// connectGroup fetches the endpoints of view.sends in dp group g and sends
// each the registration: once per (address, dp group, target set).
func (m *Manager) connectGroup(view *routeView, addr string, g int) ([]string, *RoomFailure) {
	endpoints := make([]string, len(view.sends))
	for i, s := range view.sends {
		ra, err := m.boot.rankAddress(m.ctx, addr, s.rank, g)
		if err != nil {
			return nil, &RoomFailure{Reason: ReasonTargetInfoUnavailable, Message: fmt.Sprintf("could not fetch the address of prefill TP rank %d in dp group %d from bootstrap address %s: %v", s.rank, g, addr, err)}
		}
		endpoints[i] = ra.Endpoint()
	}
	// this rank's registration in the plan's wire; its fields never change
	// after the engine registered, so one encoding serves all sends
	eng := m.engine.Load()
	reg := view.wire.RegistrationFrames(m.host(), view, &eng.EngineInfo, eng.engine)
	for i, ep := range endpoints {
		if err := m.push.Send(ep, reg); err != nil {
			return nil, &RoomFailure{Reason: ReasonSendFailed, Message: fmt.Sprintf("could not register with prefill TP rank %d (dp group %d of %s): %v", view.sends[i].rank, g, addr, err)}
		}
	}
	m.log.Info("registered with prefill ranks", "addr", addr, "dpGroup", g, "endpoints", strings.Join(endpoints, ","))
	return endpoints, nil
}

func shortHash(h string) string { return wire.ShortHash(h) }
