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

import "time"

// sweep fails rooms whose deadline passed, so that a room nobody polls
// still fails (and is counted) on time. Each pass only touches expired
// rooms: deadline lists are ordered.
func (m *Manager) sweep() {
	interval := min(m.cfg.BootstrapTimeout, m.cfg.WaitingTimeout) / 8
	interval = min(max(interval, 5*time.Millisecond), 500*time.Millisecond)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
			m.expireRooms()
		}
	}
}

func (m *Manager) expireRooms() {
	now := m.now()
	for i := range m.rooms.shards {
		m.rooms.shards[i].expire(now, m.timeoutMessage, func(e *roomEntry) {
			m.metrics.roomFailed(e.state.Failure().Reason)
		})
	}
}
