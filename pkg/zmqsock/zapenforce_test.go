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
	"errors"
	"fmt"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"
)

func curvePair(t *testing.T) (public, secret string) {
	t.Helper()
	public, secret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	return public, secret
}

// delivered sends one message as a CURVE client with the given key pair
// and reports whether pull received it within wait.
func delivered(t *testing.T, pull *zmq.Socket, port int, serverKey, public, secret string, wait time.Duration) bool {
	t.Helper()
	push, err := ConnectPush(nil, fmt.Sprintf("tcp://127.0.0.1:%d", port), SendTimeout(wait), CurveClient(serverKey, public, secret))
	if err != nil {
		t.Fatal(err)
	}
	defer push.Close()
	if _, err := push.SendMessage("hello"); err != nil && !WouldBlock(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if msg, err := pull.RecvMessage(0); err == nil && len(msg) == 1 && msg[0] == "hello" {
			return true
		}
	}
	return false
}

// A CURVE server lets in only the key its ZAP handler allows, and once the
// handler stops it lets nobody in (ZMQ_ZAP_ENFORCE_DOMAIN); the same
// socket without the option accepts any client then, which is what the
// option is for.
func TestCurveServerFailsClosedWithoutItsZAPHandler(t *testing.T) {
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer zctx.Term()
	serverPublic, serverSecret := curvePair(t)
	allowedPublic, allowedSecret := curvePair(t)
	strangerPublic, strangerSecret := curvePair(t)
	zap, err := StartZAP(zctx, func(r ZAPRequest) (bool, string) { return r.CurveClientKey() == allowedPublic, "" })
	if err != nil {
		t.Fatal(err)
	}
	enforced, port, err := BindPull(zctx, "127.0.0.1", 0, RecvTimeout(50*time.Millisecond), CurveServer(serverSecret, "test"))
	if err != nil {
		t.Fatal(err)
	}
	defer enforced.Close()
	legacy := func(s *zmq.Socket) error { // CurveServer as it was, without the option
		if err := s.SetCurveServer(1); err != nil {
			return err
		}
		if err := s.SetCurveSecretkey(serverSecret); err != nil {
			return err
		}
		return s.SetZapDomain("test")
	}
	open, openPort, err := BindPull(zctx, "127.0.0.1", 0, RecvTimeout(50*time.Millisecond), legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	if !delivered(t, enforced, port, serverPublic, allowedPublic, allowedSecret, 2*time.Second) {
		t.Fatal("the allowed key did not get through")
	}
	if delivered(t, enforced, port, serverPublic, strangerPublic, strangerSecret, 500*time.Millisecond) {
		t.Fatal("a key the handler refuses got through")
	}
	if zap.Err() != nil {
		t.Fatalf("a running handler reports %v", zap.Err())
	}

	zap.Close()
	select {
	case <-zap.Done():
	default:
		t.Fatal("Done is open after Close")
	}
	if !errors.Is(zap.Err(), ErrZAPClosed) {
		t.Fatalf("Err after Close: %v", zap.Err())
	}
	if delivered(t, enforced, port, serverPublic, strangerPublic, strangerSecret, 500*time.Millisecond) {
		t.Fatal("with the handler stopped, a stranger's key got through the enforced socket")
	}
	if delivered(t, enforced, port, serverPublic, allowedPublic, allowedSecret, 500*time.Millisecond) {
		t.Fatal("with the handler stopped, a new connection got through the enforced socket unauthenticated")
	}
	if !delivered(t, open, openPort, serverPublic, strangerPublic, strangerSecret, 2*time.Second) {
		t.Fatal("without ZMQ_ZAP_ENFORCE_DOMAIN a stranger should get in once the handler stopped (libzmq's legacy mode); the test no longer shows what the option prevents")
	}
}
