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

package zmqsock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func testPull(t *testing.T, cfg PullConfig) (*PullListener, string) {
	t.Helper()
	l, port, err := ListenPull("127.0.0.1", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, fmt.Sprintf("127.0.0.1:%d", port)
}

var statusLimits = PullConfig{MaxFrames: 5, MaxBytes: 64 << 10, MaxConns: 16, Queue: 4, HandshakeTimeout: 2 * time.Second, MessageTimeout: 2 * time.Second}

func nextMessage(t *testing.T, l *PullListener, wait time.Duration) (PullMessage, bool) {
	t.Helper()
	select {
	case m := <-l.Messages():
		return m, true
	case <-time.After(wait):
		return PullMessage{}, false
	}
}

// libzmq PUSH peers (what the prefill engines use) reach the Go PULL
// listener with their messages byte for byte: short, empty and long
// frames; a message past the limits costs its sender the connection, and
// libzmq reconnects and delivers what follows.
func TestPullListenerTakesLibzmqPushPeers(t *testing.T) {
	l, addr := testPull(t, statusLimits)
	push, err := ConnectPush(nil, "tcp://"+addr, SendTimeout(2*time.Second), Linger(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer push.Close()
	long := bytes.Repeat([]byte{0xab}, 40000)
	sent := [][]byte{[]byte("room"), {}, long, []byte("x"), bytes.Repeat([]byte("y"), 256)}
	if _, err := push.SendMessage(sent); err != nil {
		t.Fatal(err)
	}
	m, ok := nextMessage(t, l, 5*time.Second)
	if !ok || m.Err != nil || len(m.Frames) != len(sent) || m.Peer != "127.0.0.1" {
		t.Fatalf("got %d frames from %q (%v), ok %v", len(m.Frames), m.Peer, m.Err, ok)
	}
	for i := range sent {
		if !bytes.Equal(m.Frames[i], sent[i]) {
			t.Fatalf("frame %d: %d bytes, sent %d", i, len(m.Frames[i]), len(sent[i]))
		}
	}
	if _, err := push.SendMessage([][]byte{{1}, {2}, {3}, {4}, {5}, {6}}); err != nil {
		t.Fatal(err)
	}
	m, ok = nextMessage(t, l, 5*time.Second)
	var big *OversizeError
	if !ok || !errors.As(m.Err, &big) || big.Frames != 6 {
		t.Fatalf("a 6-frame message: %+v, %v", m, ok)
	}
	time.Sleep(300 * time.Millisecond) // libzmq reconnects after 100 ms
	if _, err := push.SendMessage("after"); err != nil {
		t.Fatal(err)
	}
	if m, ok = nextMessage(t, l, 5*time.Second); !ok || len(m.Frames) != 1 || string(m.Frames[0]) != "after" {
		t.Fatalf("after the reconnect: %+v, %v", m, ok)
	}
}

// rawPeer is a ZMTP PUSH peer of this test's own: it greets, sends READY
// and then whatever the test writes.
func rawPeer(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(append(zmtpGreeting(), readyCommand("PUSH")...)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, zmtpGreetingLen)); err != nil {
		t.Fatal(err)
	}
	return c
}

// floodEmpty writes up to n empty MORE frames and returns how many went
// before the listener closed the connection.
func floodFrames(c net.Conn, n, size int) int {
	frame := appendFrame(nil, flagMore, make([]byte, size))
	batch := bytes.Repeat(frame, max(1, 65536/len(frame)))
	perBatch := len(batch) / len(frame)
	sent := 0
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	for sent < n {
		if _, err := c.Write(batch); err != nil {
			return sent
		}
		sent += perBatch
	}
	return sent
}

// A message is refused while it arrives: 2,000,000 empty frames or 2,000
// frames of 65,000 bytes close the connection after the sixth frame's
// header (or the first frame past 64 KiB), not after the message; the
// listener then still serves a well-behaved peer.
func TestPullListenerRefusesAMessageWhileItArrives(t *testing.T) {
	l, addr := testPull(t, statusLimits)
	for _, c := range []struct {
		name         string
		frames, size int
		wantFrames   int
	}{
		{"2,000,000 empty frames", 2_000_000, 0, 6},
		{"2,000 frames of 65,000 bytes", 2_000, 65_000, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := rawPeer(t, addr)
			sent := floodFrames(conn, c.frames, c.size)
			m, ok := nextMessage(t, l, 5*time.Second)
			var big *OversizeError
			if !ok || !errors.As(m.Err, &big) || big.Frames != c.wantFrames {
				t.Fatalf("got %+v, %v; want an OversizeError at frame %d", m, ok, c.wantFrames)
			}
			t.Logf("connection closed after %d of %d frames written (refused at frame %d, %d bytes)", sent, c.frames, big.Frames, big.Bytes)
			if sent >= c.frames {
				t.Errorf("the whole message was written before the connection closed")
			}
		})
	}
	conn := rawPeer(t, addr)
	msg := appendFrame(appendFrame(nil, flagMore, []byte("a")), 0, []byte("b"))
	if _, err := conn.Write(msg); err != nil {
		t.Fatal(err)
	}
	if m, ok := nextMessage(t, l, 5*time.Second); !ok || len(m.Frames) != 2 {
		t.Fatalf("a well-behaved peer after the floods: %+v, %v", m, ok)
	}
}

// The handshake: only ZMTP 3 greetings with NULL, only PUSH peers, READY
// first; connections past MaxConns are closed at once.
func TestPullListenerHandshake(t *testing.T) {
	l, addr := testPull(t, PullConfig{MaxFrames: 5, MaxBytes: 1024, MaxConns: 2, HandshakeTimeout: time.Second})
	curve := zmtpGreeting()
	copy(curve[12:32], "CURVE\x00\x00\x00")
	old := zmtpGreeting()
	old[10] = 2
	for _, c := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"HTTP", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat(" ", 64)), "not a ZMTP greeting"},
		{"CURVE", append(curve, readyCommand("PUSH")...), `mechanism "CURVE"`},
		{"ZMTP 2", append(old, readyCommand("PUSH")...), "ZMTP 2.1"},
		{"a PUB peer", append(zmtpGreeting(), readyCommand("PUB")...), `socket type "PUB"`},
		{"a message first", append(zmtpGreeting(), appendFrame(nil, 0, []byte("hi"))...), "a message before READY"},
		{"reserved flags", append(zmtpGreeting(), 0x80, 0), "reserved bits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(c.bytes); err != nil {
				t.Fatal(err)
			}
			m, ok := nextMessage(t, l, 3*time.Second)
			if !ok || m.Err == nil || !strings.Contains(m.Err.Error(), c.want) {
				t.Fatalf("got %+v, %v; want %q", m, ok, c.want)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the refused connections give their slots back
	a := rawPeer(t, addr)
	b := rawPeer(t, addr)
	defer a.Close()
	defer b.Close()
	time.Sleep(100 * time.Millisecond)
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	_ = third.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := third.Read(make([]byte, 1)); err == nil || errors.Is(err, net.ErrClosed) {
		t.Fatalf("a third connection past MaxConns 2 was served: %v", err)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a third connection past MaxConns 2 was held open")
	}
}

// Messages from several connections are taken in turn: a connection that
// always has a message ready does not keep another's waiting (a channel's
// waiting senders are served first come, first served).
func TestPullListenerServesConnectionsInTurn(t *testing.T) {
	l, addr := testPull(t, PullConfig{MaxFrames: 5, MaxBytes: 1024, MaxConns: 4, Queue: 0, HandshakeTimeout: time.Second})
	busy := rawPeer(t, addr)
	quiet := rawPeer(t, addr)
	go func() { // messages without end, until the test closes the connection
		batch := bytes.Repeat(appendFrame(nil, 0, []byte("busy")), 1000)
		for {
			if _, err := busy.Write(batch); err != nil {
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := quiet.Write(appendFrame(nil, 0, []byte("quiet"))); err != nil {
		t.Fatal(err)
	}
	// Once its goroutine has read the message it waits behind at most one
	// of the busy connection's; how long the reading takes is the Go
	// scheduler's (tens of ms on a loaded machine with a busy peer).
	written := time.Now()
	deadline := time.After(time.Second)
	for seen := 0; ; seen++ {
		select {
		case m := <-l.Messages():
			if len(m.Frames) == 1 && string(m.Frames[0]) == "quiet" {
				t.Logf("the quiet connection's message came %v after it was written, after %d of the busy one's", time.Since(written), seen)
				return
			}
		case <-deadline:
			t.Fatal("the quiet connection's message did not come within 1s of a busy connection's flood")
		}
	}
}
