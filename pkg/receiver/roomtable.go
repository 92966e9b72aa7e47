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
	"sync"
	"sync/atomic"
)

// roomEntry is everything the agent keeps about one open room. Fields other
// than id are guarded by the lock of the room's shard.
type roomEntry struct {
	id    int64
	state RoomState
	view  *routeView
	addr  string
	// group is the prefill dp group (room % prefill dp size), -1 until the
	// prefill's parallel info is known.
	group    int
	openedAt int64 // monotonic nanoseconds, see Manager.now
	// endpoints are the ZMQ endpoints of view.sends in the room's dp group,
	// set when it is bootstrapped (shared with the peer cache, read-only).
	endpoints []string
	// pending is a request the engine sent while the room was Bootstrapping;
	// it is sent when the room bootstraps.
	pending *TransferRequest
	// done is closed when the room finishes or is cleared; made only when
	// someone waits, so rooms nobody waits on carry no channel.
	done chan struct{}
	// reg is the engine registration the room was opened under.
	reg *registration
	// owner is the stream that opened the room (nil for the HTTP API), ref
	// the number it gave the room, sent the status last pushed to it.
	owner *Stream
	ref   int64
	sent  TransferPoll
	// deadline list membership (intrusive, see deadlineList)
	deadline   int64
	list       *deadlineList
	prev, next *roomEntry
}

// unfinished reports whether the room still waits for something.
func (e *roomEntry) unfinished() bool { return !e.state.Status().Finished() }

const roomShards = 64

// roomTable holds the open rooms, sharded by room id so that status
// messages, the engine's calls and the sweeper rarely contend. It never
// holds more than max rooms, and a cleared room leaves nothing behind.
type roomTable struct {
	shards [roomShards]roomShard
	max    int64
	count  atomic.Int64
}

type roomShard struct {
	mu    sync.Mutex
	rooms map[int64]*roomEntry
	// bootstrapping holds rooms not yet Bootstrapped; waiting holds the rest
	// of the unfinished rooms (Bootstrapped, requested or not).
	bootstrapping, waiting deadlineList
	// highWater is the largest size of rooms since it was last rebuilt: Go
	// maps do not shrink, so a burst of rooms is released by rebuilding.
	highWater int
	// count is the table's count of open rooms.
	count *atomic.Int64
}

func newRoomTable(max int, bootstrapTimeout, waitingTimeout int64) *roomTable {
	t := &roomTable{max: int64(max)}
	for i := range t.shards {
		s := &t.shards[i]
		s.rooms = make(map[int64]*roomEntry)
		s.count = &t.count
		s.bootstrapping = deadlineList{timeout: bootstrapTimeout, reason: ReasonBootstrapTimeout}
		s.waiting = deadlineList{timeout: waitingTimeout, reason: ReasonWaitingTimeout}
	}
	return t
}

func (t *roomTable) shard(id int64) *roomShard {
	return &t.shards[(uint64(id)*0x9E3779B97F4A7C15)>>58] // Fibonacci hashing: room ids may be sequential
}

// insert adds e (in Bootstrapping) unless the id is taken or the table is
// full; it reports which.
func (t *roomTable) insert(e *roomEntry, now int64) (exists, full bool) {
	s := t.shard(e.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rooms[e.id]; ok {
		return true, false
	}
	if t.count.Add(1) > t.max {
		t.count.Add(-1)
		return false, true
	}
	s.rooms[e.id] = e
	s.highWater = max(s.highWater, len(s.rooms))
	s.bootstrapping.push(e, now)
	return false, false
}

// with runs fn on room id under its shard's lock; it reports whether the
// room exists. fn must not block.
func (t *roomTable) with(id int64, fn func(s *roomShard, e *roomEntry)) bool {
	s := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.rooms[id]
	if ok {
		fn(s, e)
	}
	return ok
}

// withEntry runs fn under e's shard lock if e is still the open room of
// its id (not cleared, nor cleared and reopened).
func (t *roomTable) withEntry(e *roomEntry, fn func(s *roomShard)) bool {
	s := t.shard(e.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rooms[e.id] != e {
		return false
	}
	fn(s)
	return true
}

// remove forgets room id entirely and returns its entry (nil if unknown).
// With owner set, only the room owner opened as ref is removed (other
// reports another room of that number).
func (t *roomTable) remove(id int64, owner *Stream, ref int64) (e *roomEntry, other bool) {
	s := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.rooms[id]
	switch {
	case !ok:
		return nil, false
	case owner != nil && (e.owner != owner || e.ref != ref):
		return nil, true
	}
	s.forget(e)
	s.maybeShrink()
	return e, false
}

// removeEntry forgets e if it is still the open room of its id.
func (t *roomTable) removeEntry(e *roomEntry) {
	s := t.shard(e.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rooms[e.id] == e {
		s.forget(e)
		s.maybeShrink()
	}
}

// forget takes e off its lists and out of the shard; the caller holds the
// lock.
func (s *roomShard) forget(e *roomEntry) {
	if e.list != nil {
		e.list.unlink(e)
	}
	e.wake()
	delete(s.rooms, e.id)
	s.count.Add(-1)
}

// maybeShrink rebuilds the map once it holds far fewer rooms than it once
// did, so that memory follows the open rooms rather than their peak.
func (s *roomShard) maybeShrink() {
	n := len(s.rooms)
	if s.highWater < 4096 || n > s.highWater/8 {
		return
	}
	m := make(map[int64]*roomEntry, n)
	for k, v := range s.rooms {
		m[k] = v
	}
	s.rooms, s.highWater = m, n
}

// markBootstrapped moves e to the waiting list; the caller holds the lock.
func (s *roomShard) markBootstrapped(e *roomEntry, now int64) {
	if !e.state.MarkBootstrapped() {
		return
	}
	s.waiting.push(e, now)
	e.publish()
}

// markRequested restarts e's waiting clock; the caller holds the lock.
func (s *roomShard) markRequested(e *roomEntry, now int64) bool {
	if !e.state.MarkRequested() {
		return false
	}
	s.waiting.push(e, now)
	return true
}

// settle pushes a room's change to its stream and, once it is terminal,
// takes it off its deadline list and wakes its waiters.
func (s *roomShard) settle(e *roomEntry) {
	e.publish()
	if e.unfinished() {
		return
	}
	if e.list != nil {
		e.list.unlink(e)
	}
	e.wake()
}

// wake closes done once; the caller holds the shard lock.
func (e *roomEntry) wake() {
	if e.done != nil {
		close(e.done)
		e.done = nil
	}
}

// fail fails e and settles it; the caller holds the lock.
func (s *roomShard) fail(e *roomEntry, reason FailureReason, message string) bool {
	ok := e.state.Fail(reason, message)
	s.settle(e)
	return ok
}

// expire fails every room of the shard whose deadline passed, calling
// onFail (under the lock, so it must not block) for each.
func (s *roomShard) expire(now int64, message func(e *roomEntry, l *deadlineList) string, onFail func(e *roomEntry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range []*deadlineList{&s.bootstrapping, &s.waiting} {
		for e := l.expired(now); e != nil; e = l.expired(now) {
			if e.state.Fail(l.reason, message(e, l)) {
				e.wake()
				e.publish()
				onFail(e)
			}
		}
	}
}

// removeWhere forgets every room for which match is true, calling
// onRemove (under the shard's lock, before the room is forgotten) for each.
func (t *roomTable) removeWhere(match func(e *roomEntry) bool, onRemove func(s *roomShard, e *roomEntry)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, e := range s.rooms {
			if match(e) {
				onRemove(s, e)
				s.forget(e)
			}
		}
		s.maybeShrink()
		s.mu.Unlock()
	}
}

// each calls fn for every room of every shard under that shard's lock.
func (t *roomTable) each(fn func(s *roomShard, e *roomEntry)) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, e := range s.rooms {
			fn(s, e)
		}
		s.mu.Unlock()
	}
}

// len is the number of open rooms.
func (t *roomTable) len() int { return int(t.count.Load()) }
