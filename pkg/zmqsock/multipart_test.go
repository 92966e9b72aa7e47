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
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// socketPair is a PUSH connected to a PULL bound on loopback, both with a
// 5 s timeout, closed with the test.
func socketPair(tb testing.TB) (push, pull *zmq.Socket) {
	tb.Helper()
	pull, port, err := BindPull(nil, "127.0.0.1", 0, RecvTimeout(5*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	push, err = ConnectPush(nil, kvwire.Endpoint("127.0.0.1", port), SendTimeout(5*time.Second))
	if err != nil {
		pull.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { push.Close(); pull.Close() })
	return push, pull
}

func frames(parts ...string) [][]byte {
	out := make([][]byte, len(parts))
	for i, p := range parts {
		out[i] = []byte(p)
	}
	return out
}

func sameFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// multipartMessages are what the tests send: empty frames, one frame,
// many, and a large one that makes the receive buffer grow.
var multipartMessages = []struct {
	name   string
	frames [][]byte
}{
	{"one empty frame", frames("")},
	{"status-like", frames("42", "2", "0", "-1", "")},
	{"empty frames between", frames("a", "", "", "b", "")},
	{"sixteen frames", frames("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f")},
	{"large", [][]byte{bytes.Repeat([]byte{0xfe}, 100<<10), []byte("tail")}},
	{"binary", [][]byte{{0, 1, 2, 0xff}, {0}}},
}

func TestReceiverReadsWhatPebbeSent(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("one-call=%v", fast), func(t *testing.T) {
			push, pull := socketPair(t)
			r := NewReceiver(pull, 32, 1<<20)
			defer r.Close()
			if (r.raw != nil) != true {
				t.Fatal("the libzmq socket of an open PULL socket was not found")
			}
			if !fast {
				r.raw = nil // pebbe/zmq4's own reading, as when its layout changes
			}
			for _, m := range multipartMessages {
				if _, err := push.SendMessage(m.frames); err != nil {
					t.Fatal(err)
				}
				got, from, err := r.Recv(0, true)
				if err != nil {
					t.Fatalf("%s: %v", m.name, err)
				}
				if !sameFrames(got, m.frames) {
					t.Fatalf("%s: received %d frames %q, sent %d", m.name, len(got), got, len(m.frames))
				}
				if from != "127.0.0.1" {
					t.Fatalf("%s: peer address %q, want 127.0.0.1", m.name, from)
				}
				if len(got) > 1 { // frames share a buffer, but not their capacity
					_ = append(got[0], 'x')
					if !bytes.Equal(got[1], m.frames[1]) {
						t.Fatalf("%s: appending to frame 0 changed frame 1 to %q", m.name, got[1])
					}
				}
			}
			if _, err := push.SendMessage(frames("p")); err != nil {
				t.Fatal(err)
			}
			if _, from, err := r.Recv(0, false); err != nil || from != "" {
				t.Fatalf("without the peer address: %q, %v", from, err)
			}
		})
	}
}

func TestReceiverDropsOversizeMessagesWhole(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("one-call=%v", fast), func(t *testing.T) {
			push, pull := socketPair(t)
			r := NewReceiver(pull, 3, 10)
			defer r.Close()
			if !fast {
				r.raw = nil
			}
			for _, tc := range []struct {
				sent           [][]byte
				frames, nbytes int
			}{
				{frames("a", "b", "c", "d"), 4, 4},              // one frame too many
				{frames("0123456789x"), 1, 11},                  // one byte too many
				{frames("01234", "56789", "", "x", "y"), 5, 12}, // both
			} {
				if _, err := push.SendMessage(tc.sent); err != nil {
					t.Fatal(err)
				}
				if _, err := push.SendMessage(frames("ok", "0123456789"[:8])); err != nil {
					t.Fatal(err)
				}
				_, _, err := r.Recv(0, false)
				var big *OversizeError
				if !errors.As(err, &big) || big.Frames != tc.frames || big.Bytes != tc.nbytes || big.MaxFrames != 3 || big.MaxBytes != 10 {
					t.Fatalf("%q: got %v, want an oversize error of %d frames and %d bytes", tc.sent, err, tc.frames, tc.nbytes)
				}
				if Retry(err) || Terminated(err) {
					t.Fatalf("an oversize message reads as a retry or a termination: %v", err)
				}
				// The whole message went: the next one is intact.
				got, _, err := r.Recv(0, false)
				if err != nil || !sameFrames(got, frames("ok", "01234567")) {
					t.Fatalf("after %q: received %q, %v", tc.sent, got, err)
				}
			}
		})
	}
}

func TestReceiverTimesOutAsPebbeDoes(t *testing.T) {
	pull, _, err := BindPull(nil, "127.0.0.1", 0, RecvTimeout(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReceiver(pull, 4, 64)
	defer r.Close()
	if _, _, err := r.Recv(0, true); !WouldBlock(err) || !Retry(err) {
		t.Fatalf("an empty socket's receive gave %v, want EAGAIN", err)
	}
	if _, _, err := r.Recv(zmq.DONTWAIT, true); !WouldBlock(err) {
		t.Fatalf("a non-blocking receive gave %v, want EAGAIN", err)
	}
	pull.Close()
	if rawSocket(pull) != nil {
		t.Fatal("a closed socket still gave its libzmq socket")
	}
	if NewReceiver(pull, 4, 64).raw != nil || NewSender(pull).raw != nil {
		t.Fatal("helpers on a closed socket would use a freed libzmq socket")
	}
}

func TestSenderSendsWhatPebbeReads(t *testing.T) {
	push, pull := socketPair(t)
	s := NewSender(push)
	defer s.Close()
	if s.raw == nil {
		t.Fatal("the libzmq socket of an open PUSH socket was not found")
	}
	many := make([][]byte, SenderMaxFrames+1) // past the buffer: frame by frame
	for i := range many {
		many[i] = []byte{byte(i)}
	}
	messages := append([][][]byte{many, {bytes.Repeat([]byte("z"), SenderMaxBytes+1)}, frames("", "")}, func() [][][]byte {
		var out [][][]byte
		for _, m := range multipartMessages {
			out = append(out, m.frames)
		}
		return out
	}()...)
	for _, m := range messages {
		if err := s.Send(m, 0); err != nil {
			t.Fatal(err)
		}
		got, err := pull.RecvMessageBytes(0)
		if err != nil || !sameFrames(got, m) {
			t.Fatalf("sent %d frames, received %d: %v", len(m), len(got), err)
		}
	}
}

func TestSenderDoesNotWaitWhenAskedNot(t *testing.T) {
	// A PUSH connected to nothing has nowhere to queue.
	push, err := zmq.NewSocket(zmq.PUSH)
	if err != nil {
		t.Fatal(err)
	}
	defer push.Close()
	if err := push.SetSndtimeo(time.Hour); err != nil {
		t.Fatal(err)
	}
	s := NewSender(push)
	defer s.Close()
	start := time.Now()
	if err := s.Send(frames("a", "b"), zmq.DONTWAIT); !WouldBlock(err) {
		t.Fatalf("a non-blocking send with nowhere to go gave %v, want EAGAIN", err)
	}
	if waited := time.Since(start); waited > time.Minute {
		t.Fatalf("waited %v", waited)
	}
}

// FuzzReceiverAndSenderAgreeWithPebbe sends the input, split into frames at
// 0x00 bytes, through real sockets: sent by pebbe/zmq4 and read by a
// Receiver, then sent by a Sender and read by pebbe/zmq4. Both must give
// the frames back as they were split.
func FuzzReceiverAndSenderAgreeWithPebbe(f *testing.F) {
	for _, seed := range []string{"", "a", "a\x00b", "\x00\x00", "room\x002\x000\x00-1\x00"} {
		f.Add([]byte(seed))
	}
	push, pull := socketPair(f)
	r := NewReceiver(pull, 1<<10, 1<<20)
	s := NewSender(push)
	f.Cleanup(func() { r.Close(); s.Close() })
	f.Fuzz(func(t *testing.T, in []byte) {
		want := bytes.Split(in, []byte{0})
		if len(want) > 1<<10 {
			t.Skip("more frames than the receiver keeps")
		}
		if _, err := push.SendMessage(want); err != nil {
			t.Fatal(err)
		}
		got, _, err := r.Recv(0, false)
		if err != nil || !sameFrames(got, want) {
			t.Fatalf("pebbe sent %q, the receiver read %q (%v)", want, got, err)
		}
		if err := s.Send(want, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := pull.RecvMessageBytes(0); err != nil || !sameFrames(got, want) {
			t.Fatalf("the sender sent %q, pebbe read %q (%v)", want, got, err)
		}
	})
}
