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
	"net/url"
	"strconv"
	"strings"
)

// rendezvous is where the peer's ranks register and decode sides ask for
// them: the peer's own bootstrap server (bootstrap.go), or another one the
// ranks register with (Config.RegisterWith), as a prefill instance's ranks
// register with whichever server its deployment names: the reference's
// own, or one that outlives the ranks.
type rendezvous interface {
	// address is the host:port a decode side asks.
	address() string
	// setFault makes the server misbehave; only the peer's own can.
	setFault(BootstrapFault)
	counts() BootstrapCounts
	// close stops the server if it is the peer's own; another is left be.
	close()
}

func (b *bootstrapServer) address() string { return b.addr }

func (b *bootstrapServer) counts() BootstrapCounts {
	c := &b.stats
	return BootstrapCounts{Puts: c.put.Load(), ParallelInfo: c.parallelInfo.Load(), RankAddress: c.rankAddress.Load(), Health: c.health.Load(), Bad: c.bad.Load()}
}

// externalBootstrap is a bootstrap server the peer does not run: its ranks
// only register with it. It answers no faults and counts nothing here.
type externalBootstrap struct{ addr string }

func (e externalBootstrap) address() string       { return e.addr }
func (externalBootstrap) setFault(BootstrapFault) {}
func (externalBootstrap) counts() BootstrapCounts { return BootstrapCounts{} }
func (externalBootstrap) close()                  {}

// ParseBootstrapURL reads where ranks register with another bootstrap
// server: http://HOST:PORT (a trailing "/" allowed) or HOST:PORT. It
// returns HOST:PORT.
func ParseBootstrapURL(s string) (string, error) {
	hostPort := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("%q is not a URL: %w", s, err)
		}
		if u.Scheme != "http" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return "", fmt.Errorf("%q: want http://HOST:PORT (the bootstrap server's root: no https, path, query or user)", s)
		}
		hostPort = u.Host
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", fmt.Errorf("%q: want http://HOST:PORT: %w", s, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" {
		return "", fmt.Errorf("%q: want a host and a port in 1–65535", s)
	}
	return hostPort, nil
}
