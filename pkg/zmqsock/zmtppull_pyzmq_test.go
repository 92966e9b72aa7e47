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
	"os/exec"
	"testing"
	"time"
)

// pyzmq's PUSH socket, which the reference prefill engine sends statuses
// with, reaches the Go listener: a five-frame message arrives as sent, a
// six-frame one costs the connection, and pyzmq reconnects and delivers
// the next. Skipped where no Python has pyzmq.
func TestPullListenerTakesPyzmqPushPeers(t *testing.T) {
	python := "/usr/bin/python3" // Debian's, with pyzmq (the project's test machines)
	if err := exec.Command(python, "-c", "import zmq").Run(); err != nil {
		t.Skipf("%s has no pyzmq: %v", python, err)
	}
	l, addr := testPull(t, statusLimits)
	script := fmt.Sprintf(`import time, zmq
s = zmq.Context().socket(zmq.PUSH)
s.connect("tcp://%s")
s.send_multipart([b"room", b"", b"x" * 300, b"d", b"e"])
s.send_multipart([b"a"] * 6)
time.sleep(0.5)
s.send_multipart([b"after"])
time.sleep(0.5)
`, addr)
	if out, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("pyzmq: %v\n%s", err, out)
	}
	var big *OversizeError
	for i, want := range []func(PullMessage) bool{
		func(m PullMessage) bool {
			return m.Err == nil && len(m.Frames) == 5 && string(m.Frames[0]) == "room" && len(m.Frames[1]) == 0 && bytes.Equal(m.Frames[2], bytes.Repeat([]byte("x"), 300))
		},
		func(m PullMessage) bool { return errors.As(m.Err, &big) && big.Frames == 6 },
		func(m PullMessage) bool { return m.Err == nil && len(m.Frames) == 1 && string(m.Frames[0]) == "after" },
	} {
		m, ok := nextMessage(t, l, 3*time.Second)
		if !ok || !want(m) {
			t.Fatalf("message %d from pyzmq: %+v (arrived %v)", i, m, ok)
		}
	}
}
