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

package localapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

const okRequest = `{"kvIndices":[1,2],"auxIndex":3}`

// TestStreamPipelinesRoomsAndPushesTheirStates: the engine sends every
// room's open and request at once, without reading in between; the agent
// pushes each room's changes of status, with the engine's ref, until
// Success; refusals come back as events with the HTTP API's codes.
func TestStreamPipelinesRoomsAndPushesTheirStates(t *testing.T) {
	r := newStreamRig(t, StreamOptions{}, nil)
	r.peer.SetDefault(prefillpeer.Success(7))
	s := openRawStream(t, r.socket, r.engine())
	if s.hello.Registration != 1 || s.hello.Replaced || s.hello.SessionID != r.engine().SessionID || s.hello.Protocol != 1 {
		t.Fatalf("hello %+v", s.hello)
	}
	if err := r.m.Open(r.peer.BootstrapAddr(), 40); err != nil { // the HTTP API's room, not the stream's
		t.Fatal(err)
	}
	var ops []string
	for room := int64(1); room <= 20; room++ {
		ops = append(ops, openOp(room, 100+room, r.peer.BootstrapAddr()), requestOp(room, 100+room, okRequest))
	}
	ops = append(ops,
		openOp(1, 999, r.peer.BootstrapAddr()), // open twice
		openOp(30, 130, r.peer.BootstrapAddr()),
		requestOp(30, 130, `{"kvIndices":[-1],"auxIndex":3}`),
		requestOp(31, 0, okRequest), // never opened
		clearOp(32, 0),
		`{"op":"open","room":33,"ref":133}`, // no address
		requestOp(40, 0, okRequest),
		clearOp(41, 0),             // never opened either
		requestOp(2, 1, okRequest), // room 2 was opened as ref 102
	)
	s.send(ops...)
	tab := roomTable{}
	refused := map[int64]StreamEvent{}
	for done := 0; done < 20 || len(refused) < 8; {
		ev := s.next()
		switch ev.Ev {
		case EvRoom:
			if *ev.Room <= 20 && ev.Ref != 100+*ev.Room {
				t.Fatalf("room %d's event carries ref %d", *ev.Room, ev.Ref)
			}
			tab.apply(ev)
			if *ev.Status == receiver.Success {
				done++
				if ev.BootstrapToken != 7 || ev.FailureCode != nil {
					t.Fatalf("success event %+v", ev)
				}
			}
		case EvRefused:
			refused[*ev.Room] = ev
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	for room, want := range map[int64]string{1: "RoomExists", 2: "RoomNotFound", 30: "InvalidArgument", 31: "RoomNotFound", 32: "RoomNotFound", 33: CodeBadRequestBody, 40: "RoomNotFound", 41: "RoomNotFound"} {
		if got := refused[room]; got.Code != want || got.Message == "" {
			t.Errorf("refusal of room %d: %+v, want code %s", room, got, want)
		}
	}
	if ev := refused[30]; ev.Op != OpRequest || !strings.Contains(ev.Message, "kvIndices[0] is -1") {
		t.Errorf("refused request: %+v", ev)
	}
	if ev := refused[1]; ev.Op != OpOpen || ev.Ref != 999 || ev.HTTPStatus != 409 {
		t.Errorf("refused open: %+v", ev)
	}
	if st, err := r.m.Status(1); err != nil || st.Status != receiver.Success {
		t.Fatalf("room 1 in the agent: %+v %v", st, err)
	}
	var clears []string
	for room := int64(1); room <= 20; room++ {
		clears = append(clears, clearOp(room, 100+room))
	}
	s.send(append(clears, clearOp(5, 105), clearOp(40, 0))...) // room 5 twice; room 40 is not the stream's
	for _, room := range []int64{5, 40} {
		if ev := s.next(); ev.Ev != EvRefused || *ev.Room != room || ev.Code != "RoomNotFound" {
			t.Fatalf("clear of room %d: %+v", room, ev)
		}
	}
	if st, err := r.m.Status(40); err != nil || st.Status != receiver.Bootstrapped {
		t.Fatalf("the HTTP API's room after the stream's calls: %+v %v", st, err)
	}
	if n := r.m.OpenRooms(); n != 2 { // rooms 30 and 40
		t.Fatalf("%d rooms open after clearing, want 2", n)
	}
}

// TestStreamEnds: whichever way a stream ends, its unfinished rooms fail
// with a code that says how and all its rooms are forgotten; the engine
// that reads gets the failures, then a closed line.
func TestStreamEnds(t *testing.T) {
	for _, c := range []struct {
		name   string
		end    func(r *streamRig, s *rawStream)
		reason receiver.FailureReason
	}{
		{"the engine closes its connection", func(r *streamRig, s *rawStream) { s.conn.Close() }, receiver.ReasonStreamClosed},
		{"a new stream of the rank", func(r *streamRig, s *rawStream) {
			if again := openRawStream(t, r.socket, r.engine()); again.hello.Replaced || again.hello.Registration != 1 {
				t.Fatalf("the same engine's second stream: %+v", again.hello)
			}
		}, receiver.ReasonStreamReplaced},
		{"the engine registers other values", func(r *streamRig, s *rawStream) {
			other := r.engine()
			other.SessionID = "127.0.0.1:18001"
			if _, err := r.m.Register(other); err != nil {
				t.Fatal(err)
			}
		}, receiver.ReasonEngineReregistered},
		{"the agent shuts down", func(r *streamRig, s *rawStream) { r.m.Close() }, receiver.ReasonShutdown},
		{"a line that is not an operation", func(r *streamRig, s *rawStream) { s.send(`{"op":"dance"}`) }, receiver.ReasonStreamProtocol},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newStreamRig(t, StreamOptions{}, nil)
			r.peer.Script(2, prefillpeer.Success(1))
			r.peer.Script(1, prefillpeer.Silence())
			s := openRawStream(t, r.socket, r.engine())
			s.send(openOp(1, 11, r.peer.BootstrapAddr()), requestOp(1, 11, okRequest), openOp(2, 12, r.peer.BootstrapAddr()), requestOp(2, 12, okRequest))
			tab := roomTable{}
			for tab[2].Status == nil || *tab[2].Status != receiver.Success || tab[1].Status == nil || *tab[1].Status != receiver.Bootstrapped {
				tab.apply(s.next())
			}
			c.end(r, s)
			testutil.Eventually(t, receivertest.WaitTimeout, "rooms closed", func() error {
				if n := r.m.OpenRooms(); n != 0 {
					return errors.New("rooms still open")
				}
				return nil
			})
			if _, err := r.m.Status(1); receiver.CodeOf(err) != receiver.CodeRoomNotFound {
				t.Fatalf("room 1 after its stream ended: %v", err)
			}
			if got := receivertest.Counter(t, r.reg, receivertest.MetricRoomFailures, "reason", string(c.reason)); got != 1 {
				t.Fatalf("%v rooms failed with %s, want 1 (room 2 had succeeded)", got, c.reason)
			}
			if c.reason == receiver.ReasonStreamClosed {
				return // nobody reads
			}
			evs := s.untilClosed()
			last := evs[len(evs)-1]
			if last.Code != string(c.reason) || last.Message == "" {
				t.Fatalf("closed line %+v, want code %s", last, c.reason)
			}
			for _, ev := range evs {
				tab.apply(ev)
			}
			if f := tab[1]; *f.Status != receiver.Failed || *f.FailureCode != string(c.reason) {
				t.Fatalf("room 1 as the engine saw it: %+v", f)
			}
			if *tab[2].Status != receiver.Success {
				t.Fatalf("room 2 as the engine saw it: %+v", tab[2])
			}
		})
	}
}

// TestStreamNobodyReads: an engine that never reads its stream costs the
// agent at most its queue; after the write timeout the agent closes the
// stream and its rooms fail with StreamStalled.
func TestStreamNobodyReads(t *testing.T) {
	r := newStreamRig(t, StreamOptions{QueueBytes: 4 << 10, WriteTimeout: 300 * time.Millisecond}, nil)
	r.peer.SetDefault(prefillpeer.Silence())
	s := openRawStream(t, r.socket, r.engine())
	const rooms = 3000 // their Bootstrapped events fill the socket's buffers, then the queue
	ops := make([]string, 0, rooms)
	for room := int64(0); room < rooms; room++ {
		ops = append(ops, openOp(room, room, r.peer.BootstrapAddr()))
	}
	s.send(ops...)
	receivertest.WaitCounter(t, r.reg, 1, receivertest.MetricRoomFailures, "reason", string(receiver.ReasonStreamStalled))
	testutil.Eventually(t, receivertest.WaitTimeout, "rooms closed", func() error {
		if n := r.m.OpenRooms(); n != 0 {
			return errors.New("the stalled stream's rooms are still open")
		}
		return nil
	})
	failed := receivertest.Counter(t, r.reg, receivertest.MetricRoomFailures, "reason", string(receiver.ReasonStreamStalled))
	if failed != rooms {
		t.Fatalf("%v rooms failed with StreamStalled, want %d", failed, rooms)
	}
	again := openRawStream(t, r.socket, r.engine()) // the engine comes back: new rooms work
	r.peer.SetDefault(prefillpeer.Success(3))
	again.send(openOp(5, 1, r.peer.BootstrapAddr()), requestOp(5, 1, okRequest))
	tab := roomTable{}
	for tab[5].Status == nil || !tab[5].Status.Finished() {
		tab.apply(again.next())
	}
	if *tab[5].Status != receiver.Success {
		t.Fatalf("a room after the stall: %+v", tab[5])
	}
}

// TestStreamFallsBehind: an engine that reads late finds every room in its
// final state: the events the agent could not queue are replaced by a
// resync of the stream's whole table.
func TestStreamFallsBehind(t *testing.T) {
	r := newStreamRig(t, StreamOptions{QueueBytes: 2 << 10}, nil)
	r.peer.SetDefault(prefillpeer.Success(4))
	s := openRawStream(t, r.socket, r.engine())
	const rooms = 2000
	ops := make([]string, 0, 2*rooms)
	for room := int64(0); room < rooms; room++ {
		ops = append(ops, openOp(room, room+1, r.peer.BootstrapAddr()), requestOp(room, room+1, okRequest))
	}
	s.send(ops...)
	receivertest.WaitCounter(t, r.reg, rooms, receivertest.MetricRooms, "outcome", "success")
	tab := roomTable{}
	resyncs := 0
	for {
		ev, err := s.read(time.Second)
		if err != nil {
			break // quiet for a second: everything was sent
		}
		if ev.Ev == EvResync {
			resyncs++
		}
		tab.apply(ev)
	}
	if resyncs == 0 {
		t.Fatal("no resync although the engine read nothing while 2000 rooms finished")
	}
	for room := int64(0); room < rooms; room++ {
		if ev := tab[room]; ev.Status == nil || *ev.Status != receiver.Success || ev.Ref != room+1 || ev.BootstrapToken != 4 {
			t.Fatalf("room %d as the engine sees it after %d resyncs: %+v", room, resyncs, ev)
		}
	}
}

// TestStreamOpensFasterThanBootstrap: a rank that opens rooms faster than
// the bootstrap server answers gets what the agent can hold (the rest are
// refused TooManyRooms), and those rooms fail with BootstrapTimeout; new
// rooms work once the bootstrap server answers again.
func TestStreamOpensFasterThanBootstrap(t *testing.T) {
	r := newStreamRig(t, StreamOptions{}, func(c *receiver.Config) { c.MaxRooms = 16; c.BootstrapTimeout = 500 * time.Millisecond })
	r.peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultHang})
	s := openRawStream(t, r.socket, r.engine())
	var ops []string
	for room := int64(0); room < 40; room++ {
		ops = append(ops, openOp(room, room, r.peer.BootstrapAddr()))
	}
	s.send(ops...)
	tab, refused := roomTable{}, 0
	for failed := 0; failed+refused < 40; {
		switch ev := s.next(); ev.Ev {
		case EvRefused:
			if ev.Code != string(receiver.CodeTooManyRooms) {
				t.Fatalf("refusal %+v", ev)
			}
			refused++
		case EvRoom:
			if *ev.Status != receiver.Failed || *ev.FailureCode != string(receiver.ReasonBootstrapTimeout) {
				t.Fatalf("room event %+v", ev)
			}
			tab.apply(ev)
			failed++
		}
	}
	if refused != 24 || len(tab) != 16 {
		t.Fatalf("%d refused, %d timed out; want 24 and 16", refused, len(tab))
	}
	r.peer.SetBootstrapFault(prefillpeer.BootstrapFault{})
	r.peer.SetDefault(prefillpeer.Success(2))
	var clears []string
	for room := range tab {
		clears = append(clears, clearOp(room, room))
	}
	s.send(clears...)
	// the fetch that hung gives up after the agent's HTTP timeout; a room
	// that joined it fails with it (or times out first, on a loaded
	// machine), the next one asks again
	room := int64(100)
	// The rooms tried (up to 160) bound the wait; the timeout is only a
	// backstop, as long as go test's own.
	testutil.Eventually(t, 10*time.Minute, "a room once the bootstrap server answers", func() error {
		s.send(openOp(room, 1, r.peer.BootstrapAddr()), requestOp(room, 1, okRequest))
		for tab[room].Status == nil || !tab[room].Status.Finished() {
			tab.apply(s.next())
		}
		ev := tab[room]
		if *ev.Status == receiver.Success {
			return nil
		}
		waiting := *ev.FailureCode == string(receiver.ReasonParallelInfoUnavailable) || *ev.FailureCode == string(receiver.ReasonBootstrapTimeout)
		if !waiting || room > 160 {
			t.Fatalf("a room once the bootstrap server answers: %+v (%s)", ev, *ev.FailureMessage)
		}
		s.send(clearOp(room, 1))
		room++
		return fmt.Errorf("room %d: %s", room-1, *ev.FailureCode)
	}, poll.Every(100*time.Millisecond))
}
