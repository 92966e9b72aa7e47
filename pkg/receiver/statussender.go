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

package receiver

import (
	"net"
	"strings"
)

// Status frames carry no credential: a room number, a status and a prefill
// TP rank anyone could write. What the agent does know is where it sent
// each rank the room's request (the rank_ip its bootstrap server gave), and
// libzmq tells where each message came from (the connection's peer
// address, message property "Peer-Address"). A status counts only if both
// are the same host.

// sentFrom reports whether a status naming prefill TP rank (a real target
// of e's plan) came from the host e sent that rank its request. A room
// that has no endpoints yet sent nothing; Observe refuses its statuses.
func (e *roomEntry) sentFrom(rank int, sender string) bool {
	if e.endpoints == nil {
		return true
	}
	return sameHost(endpointHost(e.endpoints[e.view.sendAt[rank]]), sender)
}

// endpointHost is the host of a tcp://HOST:PORT endpoint (an IPv6 literal
// without its brackets).
func endpointHost(endpoint string) string {
	hostPort := strings.TrimPrefix(endpoint, "tcp://")
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return hostPort
	}
	return host
}

// sameHost compares two IP addresses as text first (the usual case, no
// allocation), then as addresses (an IPv4-mapped IPv6 form); an unknown
// sender ("") matches nothing.
func sameHost(want, sender string) bool {
	if sender == "" {
		return false
	}
	if want == sender {
		return true
	}
	a, b := net.ParseIP(want), net.ParseIP(sender)
	return a != nil && b != nil && a.Equal(b)
}
