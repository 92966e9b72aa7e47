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
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

func TestClientReusesItsConnection(t *testing.T) {
	r := fragmented(t)
	c := r.client(t)
	if err := c.RegisterEngine(t.Context(), r.engine()); err != nil {
		t.Fatal(err)
	}
	for room := int64(1); room <= 20; room++ {
		r.peer.Script(room, prefillpeer.Success(room))
		if _, err := c.Open(t.Context(), r.peer.BootstrapAddr(), room); err != nil {
			t.Fatal(err)
		}
		got, err := c.Room(t.Context(), room)
		for err == nil && got.Status == receiver.Bootstrapping {
			got, err = c.Room(t.Context(), room)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Request(t.Context(), room, agentclient.Request{KVIndices: []int64{room}, AuxIndex: 1}); err != nil {
			t.Fatal(err)
		}
		if got, err = c.Wait(t.Context(), room, 5*time.Second); err != nil || got.Status != receiver.Success || got.BootstrapToken != room {
			t.Fatalf("room %d: %+v %v", room, got, err)
		}
		if err := c.Clear(t.Context(), room); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.accepted.Load(); n != 1 {
		t.Fatalf("%d connections for 80 sequential calls, want 1", n)
	}
}

func TestClientErrors(t *testing.T) {
	r := fragmented(t)
	c := r.client(t)
	if err := c.Healthz(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(t.Context(), r.peer.BootstrapAddr(), 5); agentclient.CodeOf(err) != string(receiver.CodeEngineNotRegistered) {
		t.Fatalf("open before registering: %v", err)
	}
	_, err := c.Room(t.Context(), 99)
	var ae *agentclient.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 404 || ae.Code != string(receiver.CodeRoomNotFound) || ae.Call != "GET /v1/rooms/99" {
		t.Fatalf("unknown room: %#v", err)
	}
	if _, err := c.Wait(t.Context(), 99, 2*time.Minute); err == nil || !strings.Contains(err.Error(), "wait 2m0s") {
		t.Fatalf("a wait past the agent's limit: %v", err)
	}
}

// TestClientTimesOut: an agent that accepts but never answers costs the
// call its timeout, then an UnavailableError that says so.
func TestClientTimesOut(t *testing.T) {
	path := agentclient.SocketPath(t.TempDir(), 0)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // hold it open, say nothing
		}
	}()
	c := agentclient.New(path, agentclient.Options{Timeout: 200 * time.Millisecond})
	start := time.Now()
	err = c.Healthz(t.Context())
	var ue *agentclient.UnavailableError
	if !errors.As(err, &ue) || !ue.Timeout() {
		t.Fatalf("silent agent: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a 200ms call took %v", took)
	}
}

func TestSocketPath(t *testing.T) {
	t.Setenv(agentclient.SocketDirEnv, "/run/x")
	for _, c := range []struct {
		dir  string
		rank int
		want string
	}{{"/tmp/s", 0, "/tmp/s/rank-0.sock"}, {"/tmp/s", 12, "/tmp/s/rank-12.sock"}, {"", 3, "/run/x/rank-3.sock"}} {
		if got := agentclient.SocketPath(c.dir, c.rank); got != c.want {
			t.Errorf("SocketPath(%q, %d) = %q, want %q", c.dir, c.rank, got, c.want)
		}
	}
	t.Setenv(agentclient.SocketDirEnv, "")
	if got := agentclient.SocketPath("", 1); got != "/run/pdtopo/rank-1.sock" {
		t.Errorf("default socket dir: %q", got)
	}
}
