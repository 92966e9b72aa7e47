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
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"

	"fmt"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// DefaultKeepRequests is how many recent requests a rank remembers when
// Config.KeepRequests is 0: enough for any scenario test, bounded so that a
// benchmark of millions of rooms does not grow the peer.
const DefaultKeepRequests = 4096

// Config describes the prefill instance a Peer plays.
type Config struct {
	// WorldSize is the whole prefill world (every dp group), as each rank
	// registers it; DPSize divides it. Engine ranks are 0..WorldSize-1.
	WorldSize int
	DPSize    int
	// EnableMLAL15Cache is the flag every rank registers.
	EnableMLAL15Cache bool
	// Buffers are every rank's buffer lengths, registered with the bootstrap
	// server and used to check received fragments.
	Buffers kvv1.BufferLens
	// RankBuffers overrides Buffers for some engine ranks. The bootstrap
	// server, like the reference's, reports the lists of the last rank that
	// registered.
	RankBuffers map[int]kvv1.BufferLens
	// Wire is the handshake the peer speaks: kvwire.WireV1 (also when
	// empty) or kvwire.WireCacheContract, for which Contract replaces
	// EnableMLAL15Cache, Buffers, RankBuffers and Transfer
	// (wirecontract.go).
	Wire kvwire.Wire
	// Contract is every prefill rank's cache contract, its wire JSON, on
	// the contract wire: what each rank PUTs to the bootstrap server and
	// plans registrations with.
	Contract []byte
	// RankContracts overrides Contract for some engine ranks; the
	// bootstrap server, like the engine's, refuses a rank whose contract
	// differs from the first one registered.
	RankContracts map[int][]byte
	// Host is the loopback address everything binds to and advertises;
	// default 127.0.0.1.
	Host string
	// BootstrapPort is the bootstrap server's port; 0 picks a free one.
	BootstrapPort int
	// RegisterWith, when set, is another bootstrap server (http://HOST:PORT
	// or HOST:PORT) the ranks register with instead of running one of
	// their own (BootstrapPort must then be 0): the reference's own
	// server, or one that outlives the peer, so that a restarted peer's
	// ranks come back at new ports under the same address.
	RegisterWith string
	// Default is the behaviour of rooms without a script; the zero value
	// succeeds with bootstrap token 0.
	Default Behavior
	// DeferRegistration leaves the ranks unregistered at the bootstrap
	// server until Peer.RegisterRanks, to test a decode side that comes first.
	DeferRegistration bool
	// KeepRequests bounds the requests each rank remembers (most recent
	// first out); 0 means DefaultKeepRequests, negative keeps none. Counts
	// are always exact.
	KeepRequests int
	// Transfer, when set, is the layout (both sides) the peer's ranks check
	// transfers against: each rank executes every non-dummy request's
	// fragments byte by byte, as the reference prefill does, on synthetic
	// memories, and records ReasonWrongBytes (and fails the room) when a
	// byte would land where the decode rank's layout wants another.
	// Peer.TransferredBytes sums what was written per room and decode rank.
	Transfer *planv1.Layout
	// Curve, when set, has the ranks speak ZMQ CURVE: each rank's PULL
	// socket is a CURVE server with the prefill's key pair (accepting any
	// client that knows its public key), and its status sockets are CURVE
	// clients of the agent's public key.
	Curve *CurveKeys
	// Logf, when set, gets one line for every error a rank finds.
	Logf func(format string, args ...any)
}

func (c *Config) withDefaults() Config {
	out := *c
	if out.Host == "" {
		out.Host = "127.0.0.1"
	}
	if out.DPSize == 0 {
		out.DPSize = 1
	}
	if out.Wire == "" {
		out.Wire = kvwire.WireV1
	}
	if hostPort, err := ParseBootstrapURL(out.RegisterWith); err == nil {
		out.RegisterWith = hostPort // validate reports a bad one
	}
	switch {
	case out.KeepRequests == 0:
		out.KeepRequests = DefaultKeepRequests
	case out.KeepRequests < 0:
		out.KeepRequests = 0
	}
	return out
}

func (c *Config) validate() error {
	if c.WorldSize < 1 || c.DPSize < 1 || c.WorldSize%c.DPSize != 0 {
		return fmt.Errorf("prefillpeer: world size %d and dp size %d: dp must be positive and divide the world", c.WorldSize, c.DPSize)
	}
	if c.RegisterWith != "" {
		if c.BootstrapPort != 0 {
			return fmt.Errorf("prefillpeer: BootstrapPort %d and RegisterWith %q exclude each other: a peer registering elsewhere runs no server", c.BootstrapPort, c.RegisterWith)
		}
		if _, err := ParseBootstrapURL(c.RegisterWith); err != nil {
			return fmt.Errorf("prefillpeer: RegisterWith: %w", err)
		}
	}
	w, err := newPeerWire(c.Wire)
	if err != nil {
		return err
	}
	return w.validate(c)
}

// buffers are the lengths engine rank r holds.
func (c *Config) buffers(r int) kvv1.BufferLens {
	if b, ok := c.RankBuffers[r]; ok {
		return b
	}
	return c.Buffers
}

// registration is the body engine rank r PUTs to the bootstrap server.
func (c *Config) registration(r, port int) kvv1.RankRegistration {
	return kvv1.RankRegistration{
		Role: kvwire.RolePrefill, WorldSize: c.WorldSize, DPSize: c.DPSize,
		RankIP: c.Host, RankPort: port, EngineRank: r,
		EnableMLAL15Cache: c.EnableMLAL15Cache, BufferLens: c.buffers(r),
	}
}

// CurveKeys are the prefill's key pair and the agent's public key (Z85).
type CurveKeys struct {
	PrefillSecret, PrefillPublic string
	AgentPublic                  string
}

// pullOptions and pushOptions are the CURVE options of a rank's sockets.
func (c *Config) pullOptions() []zmqsock.Option {
	if c.Curve == nil {
		return nil
	}
	return []zmqsock.Option{func(s *zmq.Socket) error {
		if err := s.SetCurveServer(1); err != nil {
			return err
		}
		return s.SetCurveSecretkey(c.Curve.PrefillSecret)
	}}
}

func (c *Config) pushOptions() []zmqsock.Option {
	if c.Curve == nil {
		return nil
	}
	return []zmqsock.Option{zmqsock.CurveClient(c.Curve.AgentPublic, c.Curve.PrefillPublic, c.Curve.PrefillSecret)}
}
