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

package agentclient_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// fakeAgent speaks the stream's handshake on a real unix socket and lets
// a test write any line: the faults the real agent never commits.
type fakeAgent struct {
	socket  string
	streams chan *fakeStream
}

type fakeStream struct {
	conn net.Conn
	ops  chan map[string]any
}

func startFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{socket: agentclient.SocketPath(t.TempDir(), 0), streams: make(chan *fakeStream, 8)}
	ln, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(conn)
		}
	}()
	return f
}

func (f *fakeAgent) serve(conn net.Conn) {
	r := bufio.NewReader(conn)
	req, err := http.ReadRequest(r)
	if err != nil {
		return
	}
	var reg localapi.EngineBody
	if err := json.NewDecoder(req.Body).Decode(&reg); err != nil || reg.SessionID == nil {
		return // the client under test failed to register: its test times out waiting for the stream
	}
	fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", localapi.StreamProtocol)
	fmt.Fprintf(conn, `{"ev":"hello","protocol":1,"engineRank":0,"sessionId":%q,"registration":1,"replaced":false}`+"\n", *reg.SessionID)
	s := &fakeStream{conn: conn, ops: make(chan map[string]any, 1024)}
	f.streams <- s
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var op map[string]any
		_ = json.Unmarshal(line, &op) // a line that is no JSON arrives as a nil op, which no test accepts
		s.ops <- op
	}
}

func (f *fakeAgent) next(t *testing.T) *fakeStream {
	t.Helper()
	select {
	case s := <-f.streams:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no stream")
		return nil
	}
}

func (s *fakeStream) op(t *testing.T) map[string]any {
	t.Helper()
	select {
	case op := <-s.ops:
		return op
	case <-time.After(5 * time.Second):
		t.Fatal("no operation")
		return nil
	}
}

func (s *fakeStream) send(lines ...string) {
	_, _ = io.WriteString(s.conn, strings.Join(lines, "\n")+"\n") // a lost write shows as an event that never arrives
}

func roomEvent(room, ref int64, status string) string {
	return fmt.Sprintf(`{"ev":"room","ref":%d,"room":%d,"status":%q,"bootstrapToken":-1,"specCandidateIds":null,"failureCode":null,"failureMessage":null}`, ref, room, status)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.EventuallyTrue(t, 5*time.Second, what, cond)
}

func fakeManager(t *testing.T) (*fakeAgent, *fakeStream, *agentclient.Manager) {
	f := startFakeAgent(t)
	c := agentclient.New(f.socket, agentclient.Options{Timeout: time.Second})
	mgr, err := agentclient.NewManager(t.Context(), c, receiver.EngineInfo{SessionID: "127.0.0.1:17000", KVDataPtrs: []uint64{1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Close)
	return f, f.next(t), mgr
}

// TestStreamEventsOnlyReachTheirRoom: events for a room the client never
// opened, or for an earlier opening of a room number, change nothing and
// are counted; the stream holds.
func TestStreamEventsOnlyReachTheirRoom(t *testing.T) {
	_, s, mgr := fakeManager(t)
	old := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 5)
	oldRef := int64(s.op(t)["ref"].(float64))
	if err := old.Clear(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.op(t)
	rc := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 5)
	ref := int64(s.op(t)["ref"].(float64))
	s.send(roomEvent(999, 1, "Success"), roomEvent(5, oldRef, "Success"),
		`{"ev":"refused","op":"clear","room":77,"ref":3,"httpStatus":404,"code":"RoomNotFound","message":"m"}`,
		`{"ev":"future","x":1}`, roomEvent(5, ref, "Bootstrapped"))
	waitFor(t, "room 5's own event", func() bool { return rc.Poll(t.Context()) == receiver.Bootstrapped })
	if st := mgr.Stats(); st.UnknownEvents != 3 || st.StreamsLost != 0 {
		t.Fatalf("stats %+v: want 3 unknown events and the stream holding", st)
	}
}

// TestStreamLostFailsRoomsAndReconnects: a stream that ends without a
// word (the agent crashed) fails the rooms that had not finished with
// AgentStreamLost, keeps the finished ones, and the manager connects and
// registers again by itself.
func TestStreamLostFailsRoomsAndReconnects(t *testing.T) {
	f, s, mgr := fakeManager(t)
	done := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 1)
	doneRef := int64(s.op(t)["ref"].(float64))
	open := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 2)
	s.op(t)
	s.send(roomEvent(1, doneRef, "Success"))
	waitFor(t, "room 1's Success", func() bool { return done.Poll(t.Context()) == receiver.Success })
	s.send("<html>proxy error</html>") // not the protocol: the stream ends
	waitFor(t, "room 2's failure", func() bool { return open.Poll(t.Context()) == receiver.Failed })
	fe := open.Failure(t.Context())
	if fe.FailureCode != agentclient.FailureAgentStreamLost || !strings.Contains(fe.FailureReason, "not an event") || !strings.Contains(fe.FailureReason, "was Bootstrapping") {
		t.Fatalf("room 2: %+v", fe)
	}
	if done.Poll(t.Context()) != receiver.Success {
		t.Fatal("a room that had succeeded lost its Success")
	}
	again := f.next(t)
	rc := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 3)
	ref := int64(again.op(t)["ref"].(float64))
	again.send(roomEvent(3, ref, "Bootstrapped"))
	waitFor(t, "a room on the new stream", func() bool { return rc.Poll(t.Context()) == receiver.Bootstrapped })
}

// TestStreamTakenByAnotherEngine: the manager does not fight for its rank.
func TestStreamTakenByAnotherEngine(t *testing.T) {
	f, s, mgr := fakeManager(t)
	rc := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 1)
	s.op(t)
	s.send(`{"ev":"closed","code":"EngineReregistered","message":"the engine of rank 0 registered again with other values"}`)
	s.conn.Close()
	waitFor(t, "the stream's end", func() bool { return rc.Poll(t.Context()) == receiver.Failed })
	select {
	case <-f.streams:
		t.Fatal("the manager connected again after another engine took the rank")
	case <-time.After(300 * time.Millisecond):
	}
	refused := mgr.NewReceiver(t.Context(), "10.0.0.1:8998", 2)
	if fe := refused.Failure(t.Context()); fe.FailureCode != agentclient.FailureAgentRefused || !strings.Contains(fe.FailureReason, "another engine registered on this rank") {
		t.Fatalf("a room while another engine has the rank: %+v", fe)
	}
	if err := mgr.Register(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.next(t)
}
