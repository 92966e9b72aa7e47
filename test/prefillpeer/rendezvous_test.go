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

package prefillpeer

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// A peer that registers with another peer's bootstrap server: that server
// answers the new ranks' addresses, and a third peer started in the second
// one's place (as a restarted prefill) replaces them.
func TestRegisterWithAnotherServer(t *testing.T) {
	noLeaks(t)
	server := startPeer(t, Config{WorldSize: 2, Buffers: p2Buffers})
	base := "http://" + server.BootstrapAddr()
	for _, with := range []string{base, base + "/", server.BootstrapAddr()} {
		t.Run(with, func(t *testing.T) {
			for move := range 2 { // the second peer is the first one moved
				before := server.BootstrapCounts().Puts
				p, err := Start(Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: with})
				if err != nil {
					t.Fatal(err)
				}
				if p.BootstrapAddr() != server.BootstrapAddr() {
					t.Errorf("BootstrapAddr %q, want the server's %q", p.BootstrapAddr(), server.BootstrapAddr())
				}
				if got := server.BootstrapCounts().Puts - before; got != 2 {
					t.Errorf("move %d: the server took %d registrations, want 2", move, got)
				}
				for r := range 2 {
					_, body, _ := get(t, base+"/route?"+kvwire.RankAddressQuery(r, 0))
					want := fmt.Sprintf(`{"rank_ip": "127.0.0.1", "rank_port": %d}`, p.Rank(r).Port)
					if body != want || p.Rank(r).Port == server.Rank(r).Port {
						t.Errorf("move %d: rank %d: the server answers %s, want %s", move, r, body, want)
					}
				}
				if c := p.BootstrapCounts(); c != (BootstrapCounts{}) {
					t.Errorf("a peer without a server counted %+v", c)
				}
				p.SetBootstrapFault(BootstrapFault{Health: Fault500}) // no server of its own: nothing happens
				if code, _, _ := get(t, base+"/health"); code != 200 {
					t.Errorf("the other server's /health answered %d after SetBootstrapFault on the registering peer", code)
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				if code, _, _ := get(t, base+"/health"); code != 200 {
					t.Errorf("closing the registering peer stopped the other server: /health %d", code)
				}
			}
		})
	}
}

func TestRegisterWithRefused(t *testing.T) {
	noLeaks(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := l.Addr().String()
	_ = l.Close() // nothing listens there now
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nobody listens", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: "http://" + silent}, "engine rank 0 registering with " + silent},
		{"https", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: "https://" + silent}, "RegisterWith: \"https://"},
		{"a path", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: "http://" + silent + "/route"}, "no https, path"},
		{"no port", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: "http://127.0.0.1"}, "want http://HOST:PORT"},
		{"port 0", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: "127.0.0.1:0"}, "port in 1–65535"},
		{"and a port", Config{WorldSize: 2, Buffers: p2Buffers, RegisterWith: silent, BootstrapPort: 9}, "BootstrapPort 9 and RegisterWith"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			p, err := Start(c.cfg)
			if err == nil {
				_ = p.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Start took %v to fail", d)
			}
		})
	}
}
