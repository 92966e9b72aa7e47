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
	"sync"
	"time"
)

// heartbeat checks every bootstrap address with cached parallel info each
// interval; after HeartbeatMisses consecutive failures the address is
// dropped from every cache and its unfinished rooms fail.
func (m *Manager) heartbeat() {
	tick := time.NewTicker(m.cfg.HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
			if r := m.routing.Load(); r != nil {
				m.checkAddresses(r.peers)
			}
		}
	}
}

// checkAddresses probes every live address concurrently: one slow server
// must not delay the verdict on the others.
func (m *Manager) checkAddresses(t *peerTable) {
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.HeartbeatInterval)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range t.live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lost, err := p.view.wire.Probe(ctx, m.host(), p.addr, p.info) // the plan's wire: /health, or a re-read of the answer
			if lost != nil {                                              // the prefill changed what it answers: its rooms fail now
				m.loseAddress(t, p.addr, lost.Reason, lost.Message)
			}
			if m.ctx.Err() != nil {
				return // shutting down: the failure is ours, not the prefill's
			}
			if err != nil {
				m.metrics.heartbeatMissed()
			}
			if err == nil {
				m.recheckRanks(ctx, t, p.addr)
			}
			misses := t.missed(p.addr, err != nil)
			if err != nil {
				m.log.Info("heartbeat missed", "addr", p.addr, "misses", misses, "error", err)
			}
			if misses >= m.cfg.HeartbeatMisses {
				m.loseAddress(t, p.addr, ReasonLostConnection, fmt.Sprintf("lost connection with prefill at %s: %d consecutive heartbeats failed (last: %v)", p.addr, misses, err))
			}
		}()
	}
	wg.Wait()
	t.forgetExpiredRefusals(m.now())
}

// loseAddress drops addr from the caches, closes its sockets and fails
// every unfinished room bound to it with reason.
func (m *Manager) loseAddress(t *peerTable, addr string, reason FailureReason, message string) {
	endpoints, ok := t.drop(addr)
	if !ok {
		return
	}
	m.push.Drop(endpoints)
	m.metrics.addressLost()
	failed := 0
	m.rooms.each(func(s *roomShard, e *roomEntry) {
		if e.addr == addr && s.fail(e, reason, message) {
			failed++
			m.metrics.roomFailed(reason)
		}
	})
	what := "lost connection with prefill"
	if reason != ReasonLostConnection {
		what = "prefill changed what it answers; its rooms failed"
	}
	m.log.Error(what, "addr", addr, "reason", reason, "failedRooms", failed, "message", message)
}
