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
	"log/slog"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// socketlessManager is a Manager with a room table and no sockets: enough
// to drive handleStatus with arbitrary frames.
func socketlessManager(t testing.TB, room int64) *Manager {
	snap, err := SnapshotFor(fixtures.MustPlan(fixtures.FragmentedP8D4()), 0) // expects ranks 0 and 1
	if err != nil {
		t.Fatal(err)
	}
	view, err := newRouteView(snap)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{log: slog.New(slog.DiscardHandler), start: time.Now(), rooms: newRoomTable(16, int64(time.Hour), int64(time.Hour))}
	e := &roomEntry{id: room, view: view, group: 0, state: NewRoomState(view.expected, view.required),
		endpoints: []string{"tcp://127.0.0.1:4000", "tcp://127.0.0.1:4001"}}
	m.rooms.insert(e, 0)
	m.rooms.with(room, func(s *roomShard, e *roomEntry) { s.markBootstrapped(e, 0); s.markRequested(e, 0) })
	return m
}

// FuzzHandleStatus feeds arbitrary messages (separated by "|", frames by
// ",") to the status handler of a room expecting prefill ranks 0 and 1 at
// 127.0.0.1; a message that starts with "~" comes from 127.0.0.9 instead.
// Nothing may panic, the room never moves down, and it only succeeds or
// fails on what its expected ranks said from their own host.
func FuzzHandleStatus(f *testing.F) {
	f.Add([]byte("7,5,0,-1,|7,5,1,3,"))
	f.Add([]byte("7,0,5|7,5,0|7,5,0"))
	f.Add([]byte("7,3,1|7,2,0|7,9,0|,,|7"))
	f.Add([]byte("~7,5,0,-1,|~7,5,1,3,|~7,0,0"))
	f.Fuzz(func(t *testing.T, input []byte) {
		const room = 7
		m := socketlessManager(t, room)
		succeeded := map[int]bool{}
		failedByExpected := false
		prev := Bootstrapped
		for _, msg := range bytes.Split(input, []byte("|")) {
			sender := "127.0.0.1"
			if forged, ok := bytes.CutPrefix(msg, []byte("~")); ok {
				msg, sender = forged, "127.0.0.9"
			}
			frames := bytes.Split(msg, []byte(","))
			m.handleStatus(frames, sender)
			if st, err := kvwire.DecodeStatus(frames); err == nil && st.Room == room && st.PrefillTPRank <= 1 && sender == "127.0.0.1" {
				switch st.State {
				case kvwire.Success:
					succeeded[st.PrefillTPRank] = true
				case kvwire.Failed:
					failedByExpected = failedByExpected || !(succeeded[0] && succeeded[1])
				}
			}
			got, _ := m.Status(room)
			switch {
			case got.Status == Failed && !failedByExpected:
				t.Fatalf("room failed without a Failed from an expected rank: %q", input)
			case got.Status == Success && !(succeeded[0] && succeeded[1]):
				t.Fatalf("room succeeded without both expected ranks: %q", input)
			case got.Status != Failed && got.Status < prev:
				t.Fatalf("room moved down from %s to %s: %q", prev, got.Status, input)
			}
			prev = got.Status
		}
	})
}
