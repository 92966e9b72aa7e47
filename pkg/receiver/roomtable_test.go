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
	"testing"
)

func newTestEntry(id int64) *roomEntry {
	return &roomEntry{id: id, state: NewRoomState(1, 1), group: -1}
}

func TestRoomTableRefusesDuplicatesAndOverflow(t *testing.T) {
	tab := newRoomTable(2, 100, 1000)
	if exists, full := tab.insert(newTestEntry(1), 0); exists || full {
		t.Fatal("first insert refused")
	}
	if exists, _ := tab.insert(newTestEntry(1), 0); !exists {
		t.Fatal("duplicate room accepted")
	}
	tab.insert(newTestEntry(2), 0)
	if _, full := tab.insert(newTestEntry(3), 0); !full {
		t.Fatal("third room accepted in a table of two")
	}
	if e, _ := tab.remove(2, nil, 0); e == nil || tab.len() != 1 {
		t.Fatalf("remove: len %d", tab.len())
	}
	if _, full := tab.insert(newTestEntry(3), 0); full {
		t.Fatal("room refused after another was cleared")
	}
}

func TestRoomTableExpiresEveryUnfinishedState(t *testing.T) {
	const boot, wait = 100, 1000
	tab := newRoomTable(10, boot, wait)
	stuck := newTestEntry(1) // never bootstrapped
	tab.insert(stuck, 0)
	idle := newTestEntry(2) // bootstrapped, request never sent
	tab.insert(idle, 0)
	silent := newTestEntry(3) // requested, prefill never answers
	tab.insert(silent, 0)
	done := newTestEntry(4) // finished: must not expire
	tab.insert(done, 0)
	tab.with(2, func(s *roomShard, e *roomEntry) { s.markBootstrapped(e, 10) })
	tab.with(3, func(s *roomShard, e *roomEntry) { s.markBootstrapped(e, 10); s.markRequested(e, 500) })
	tab.with(4, func(s *roomShard, e *roomEntry) {
		s.markBootstrapped(e, 10)
		s.markRequested(e, 20)
		e.state.Observe(0, 0, Success, -1, nil)
		s.settle(e)
	})
	expire := func(now int64) {
		for i := range tab.shards {
			tab.shards[i].expire(now, func(e *roomEntry, l *deadlineList) string { return "timed out" }, func(*roomEntry) {})
		}
	}
	expire(boot)
	if stuck.state.Failure() == nil || stuck.state.Failure().Reason != ReasonBootstrapTimeout {
		t.Fatalf("bootstrapping room: %v", stuck.state.Failure())
	}
	if idle.state.Status() != Bootstrapped || silent.state.Status() != Bootstrapped {
		t.Fatal("rooms expired before their deadline")
	}
	expire(10 + wait)
	if idle.state.Failure() == nil || idle.state.Failure().Reason != ReasonWaitingTimeout {
		t.Fatalf("idle room: %v", idle.state.Failure())
	}
	if silent.state.Status() != Bootstrapped {
		t.Fatal("the request did not restart the waiting clock")
	}
	expire(500 + wait)
	if silent.state.Failure() == nil || silent.state.Failure().Reason != ReasonWaitingTimeout {
		t.Fatalf("silent room: %v", silent.state.Failure())
	}
	if done.state.Status() != Success {
		t.Fatalf("finished room changed to %v", done.state.Status())
	}
}

func TestRoomTableForgetsClearedRooms(t *testing.T) {
	tab := newRoomTable(1<<20, 100, 1000)
	for id := range int64(20000) {
		tab.insert(newTestEntry(id), 0)
	}
	for id := range int64(20000) {
		if e, _ := tab.remove(id, nil, 0); e == nil {
			t.Fatalf("room %d missing", id)
		}
	}
	for i := range tab.shards {
		s := &tab.shards[i]
		if len(s.rooms) != 0 || s.bootstrapping.head != nil || s.waiting.head != nil {
			t.Fatalf("shard %d keeps state after every room was cleared", i)
		}
	}
	if tab.len() != 0 {
		t.Fatalf("len %d", tab.len())
	}
}

func TestWithEntryIgnoresReopenedRoom(t *testing.T) {
	tab := newRoomTable(10, 100, 1000)
	old := newTestEntry(7)
	tab.insert(old, 0)
	tab.remove(7, nil, 0)
	tab.insert(newTestEntry(7), 0)
	if tab.withEntry(old, func(*roomShard) {}) {
		t.Fatal("a cleared room's entry reached the reopened room")
	}
}
