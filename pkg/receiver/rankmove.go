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
	"context"
	"fmt"
)

// cachedGroup is a dp group of an address whose rank endpoints are cached.
type cachedGroup struct {
	group     int
	endpoints []string
	view      *routeView
}

// cachedGroups returns the dp groups of addr with cached endpoints.
func (t *peerTable) cachedGroups(addr string) []cachedGroup {
	t.mu.Lock()
	defer t.mu.Unlock()
	pa := t.addrs[addr]
	if pa == nil {
		return nil
	}
	var out []cachedGroup
	for g, grp := range pa.groups {
		if grp.endpoints != nil {
			out = append(out, cachedGroup{g, grp.endpoints, pa.view})
		}
	}
	return out
}

// forgetGroup clears the cached endpoints of addr's dp group g if they are
// still endpoints, so that the next room of g fetches and registers anew.
func (t *peerTable) forgetGroup(addr string, g int, endpoints []string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	pa := t.addrs[addr]
	if pa == nil {
		return false
	}
	grp := pa.groups[g]
	if grp == nil || !sameEndpoints(grp.endpoints, endpoints) {
		return false
	}
	grp.endpoints = nil
	return true
}

// sameEndpoints reports whether a and b are the same cached slice (not
// merely equal: a group fetched anew gets a slice of its own).
func sameEndpoints(a, b []string) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// recheckRanks re-reads, after a heartbeat of addr answered, the address
// of every prefill rank whose endpoint is cached. A prefill rank that
// restarts on a new address (a new pod, a fresh port) registers with the
// bootstrap server again while the server's health check keeps answering,
// so the heartbeat alone never notices: without this every later room of
// the group would go to the old endpoint and fail WaitingTimeout. A moved
// rank's group is forgotten (the next room fetches the addresses and
// registers with the ranks again) and the rooms bootstrapped onto the old
// endpoints fail now, saying which rank moved, instead of at their
// timeout. A rank address that cannot be read is left to the heartbeat.
func (m *Manager) recheckRanks(ctx context.Context, t *peerTable, addr string) {
	for _, c := range t.cachedGroups(addr) {
		for i, s := range c.view.sends {
			ra, err := m.boot.rankAddress(ctx, addr, s.rank, c.group)
			if err != nil {
				break
			}
			if ep := ra.Endpoint(); ep != c.endpoints[i] {
				m.rankMoved(t, addr, c, fmt.Sprintf("prefill TP rank %d (dp group %d of %s) moved from %s to %s", s.rank, c.group, addr, c.endpoints[i], ep))
				break
			}
		}
	}
}

// rankMoved forgets group c of addr, closes its sockets and fails the
// unfinished rooms bootstrapped onto them.
func (m *Manager) rankMoved(t *peerTable, addr string, c cachedGroup, message string) {
	if !t.forgetGroup(addr, c.group, c.endpoints) {
		return
	}
	m.push.Drop(c.endpoints)
	failed := 0
	m.rooms.each(func(s *roomShard, e *roomEntry) {
		if e.addr == addr && sameEndpoints(e.endpoints, c.endpoints) && s.fail(e, ReasonLostConnection, message) {
			failed++
			m.metrics.roomFailed(ReasonLostConnection)
		}
	})
	m.log.Warn("prefill rank moved; its dp group registers again", "addr", addr, "dpGroup", c.group, "failedRooms", failed, "message", message)
}
