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
	"slices"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

func TestBindPullOnAFreePortAndPushToIt(t *testing.T) {
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer zctx.Term()
	pull, port, err := BindPull(zctx, "127.0.0.1", 0, RecvTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer pull.Close()
	if port < 1 || port > 65535 {
		t.Fatalf("port %d", port)
	}
	if bound, _ := pull.GetLastEndpoint(); bound != kvwire.Endpoint("127.0.0.1", port) {
		t.Fatalf("bound to %s, read back port %d", bound, port)
	}
	// Nothing sent yet: the receive times out, and that is a retry.
	if _, err := pull.RecvMessageBytes(0); !Retry(err) || !WouldBlock(err) || Terminated(err) {
		t.Fatalf("an empty socket's receive gave %v, want EAGAIN", err)
	}
	push, err := ConnectPush(zctx, kvwire.Endpoint("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	defer push.Close()
	if _, err := push.SendMessage([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	var msg [][]byte
	if err := poll.Until(5*time.Second, func() error { // each receive waits the socket's poll interval
		var err error
		if msg, err = pull.RecvMessageBytes(0); err != nil && !Retry(err) {
			return poll.Stop(err)
		}
		return err
	}, poll.Every(0)); err != nil {
		t.Fatalf("receiving: %v", err)
	}
	if !slices.EqualFunc(msg, [][]byte{[]byte("a"), []byte("b")}, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("received %q", msg)
	}
	// A second bind on the same port fails and says where.
	if _, _, err := BindPull(zctx, "127.0.0.1", port); err == nil {
		t.Fatalf("binding port %d twice succeeded", port)
	}
}

func TestOptionsApplyAndFailuresCloseTheSocket(t *testing.T) {
	boom := errors.New("boom")
	if _, _, err := BindPull(nil, "127.0.0.1", 0, func(*zmq.Socket) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failing option gave %v", err)
	}
	if _, err := ConnectPush(nil, "not-an-endpoint"); err == nil {
		t.Fatal("connecting to a malformed endpoint succeeded")
	}
	sock, err := ConnectPush(nil, kvwire.Endpoint("127.0.0.1", 1), Linger(time.Second), SendHWM(7))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if hwm, _ := sock.GetSndhwm(); hwm != 7 {
		t.Fatalf("send HWM %d, want 7", hwm)
	}
	if l, _ := sock.GetLinger(); l != time.Second {
		t.Fatalf("linger %v, want 1s", l)
	}
}
