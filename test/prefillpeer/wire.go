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

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// peerWire is what one wire of the handshake does differently in a prefill
// peer: tokenspeed's v1 wire (v1Wire, wirev1.go) or its cache-contract wire
// (contractWire, wirecontract.go). Config.Wire names it; the rest of the
// peer (sockets, scripts, statuses, the recorder, the bootstrap server's
// routes and faults) is the same on both.
type peerWire interface {
	// validate checks what the wire needs of the configuration.
	validate(c *Config) error
	// describe is the configuration's layout in a line: what it registers.
	describe(c *Config) string
	// registrationBody is what engine rank r PUTs to the bootstrap server.
	registrationBody(c *Config, engineRank, port int) []byte
	// newRank is what rank engineRank keeps and does on this wire.
	newRank(c *Config, engineRank int) (rankWire, error)

	// file files a rank's PUT /route body at the bootstrap server, or says
	// why the server would refuse it (a 500). parallelInfo is the server's
	// answer (b.mu held); otherParallelInfo the other wire's answer, for a
	// server that changed its mind (FaultOtherWire).
	file(b *bootstrapServer, body []byte) error
	parallelInfo(b *bootstrapServer) []byte
	otherParallelInfo(b *bootstrapServer) []byte
}

// rankWire is what a prefill rank does with a message on its wire; it runs
// on the rank's receive goroutine.
type rankWire interface {
	handle(r *Rank, msg [][]byte)
}

// newPeerWire is the one place the peer's wire is chosen, from Config.Wire
// (empty is v1).
func newPeerWire(name kvwire.Wire) (peerWire, error) {
	switch name {
	case "", kvwire.WireV1:
		return &v1Wire{}, nil
	case kvwire.WireCacheContract:
		return &contractWire{}, nil
	}
	return nil, fmt.Errorf("prefillpeer: wire %q: want %q or %q", name, kvwire.WireV1, kvwire.WireCacheContract)
}
