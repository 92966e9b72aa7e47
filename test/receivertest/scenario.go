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

package receivertest

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Scenario is a real prefill peer on loopback and the decode agents of one
// layout, each with its engine registered, its own status socket and its
// own metrics registry. Agents[i] and Regs[i] belong together.
type Scenario struct {
	TB     testing.TB
	Layout planv1.Layout
	// Contract is the pair of a cache-contract scenario (nil on the v1
	// wire, where Layout is the pair).
	Contract *fixtures.ContractPair
	Set      *transferplan.PlanSet
	Peer     *prefillpeer.Peer
	Agents   []*receiver.Manager
	Regs     []*prometheus.Registry
	// Req is what OpenAndRequest sends: Request on the v1 wire, the pair's
	// first manifest on the contract wire.
	Req receiver.TransferRequest
}

// NewScenario starts a peer for l (changed by peerMut, may be nil) and one
// agent per engine rank (changed by cfgMut, may be nil); everything is
// closed when the test ends.
func NewScenario(tb testing.TB, l planv1.Layout, engineRanks []int, peerMut func(*prefillpeer.Config), cfgMut func(*receiver.Config)) *Scenario {
	tb.Helper()
	set, err := planv1.Plan(l)
	if err != nil {
		tb.Fatalf("plan: %v", err)
	}
	s := &Scenario{TB: tb, Layout: l, Set: set, Req: Request}
	s.Peer = StartPeer(tb, l, func(c *prefillpeer.Config) {
		c.Logf = tb.Logf
		if peerMut != nil {
			peerMut(c)
		}
	})
	for _, rank := range engineRanks {
		s.AddAgent(rank, cfgMut)
	}
	return s
}

// AddAgent starts an agent for engineRank and registers its engine.
func (s *Scenario) AddAgent(engineRank int, cfgMut func(*receiver.Config)) *receiver.Manager {
	s.TB.Helper()
	snap, err := receiver.SnapshotFor(s.Set, engineRank)
	if err != nil {
		s.TB.Fatal(err)
	}
	m, reg := StartAgent(s.TB, &snap, engineRank, cfgMut)
	info := Engine(snap, engineRank)
	if s.Contract != nil {
		info = ContractEngine(*s.Contract, engineRank)
	}
	if err := m.RegisterEngine(info); err != nil {
		s.TB.Fatalf("registering engine rank %d: %v", engineRank, err)
	}
	s.Agents = append(s.Agents, m)
	s.Regs = append(s.Regs, reg)
	return m
}

// Open opens room on agent i only; its request is not sent.
func (s *Scenario) Open(i int, room int64) {
	s.TB.Helper()
	if err := s.Agents[i].Open(s.Peer.BootstrapAddr(), room); err != nil {
		s.TB.Fatalf("agent %d: open room %d: %v", i, room, err)
	}
}

// OpenAndRequest opens room on every agent and sends s.Req from each once
// it is bootstrapped.
func (s *Scenario) OpenAndRequest(room int64) {
	s.TB.Helper()
	for i := range s.Agents {
		s.Open(i, room)
	}
	for i, m := range s.Agents {
		if st := WaitStatus(s.TB, m, room, bootstrappedOrFailed); st.Status == receiver.Failed {
			s.TB.Fatalf("agent %d: room %d failed while bootstrapping: %v", i, room, st.Failure)
		}
		if err := m.Request(room, s.Req); err != nil {
			s.TB.Fatalf("agent %d: request room %d: %v", i, room, err)
		}
	}
}

// WaitFinished waits until room has finished (succeeded or failed) on agent i.
func (s *Scenario) WaitFinished(i int, room int64) receiver.RoomStatus {
	s.TB.Helper()
	return WaitStatus(s.TB, s.Agents[i], room, receiver.TransferPoll.Finished)
}

// ExpectFailure waits for room to fail on agent i with reason and a message
// that contains every part.
func (s *Scenario) ExpectFailure(i int, room int64, reason receiver.FailureReason, parts ...string) {
	s.TB.Helper()
	st := s.WaitFinished(i, room)
	if st.Status != receiver.Failed || st.Failure == nil {
		s.TB.Fatalf("room %d: %s, want Failed (%s)", room, st.Status, reason)
	}
	if st.Failure.Reason != reason {
		s.TB.Fatalf("room %d failed with %s (%s), want %s", room, st.Failure.Reason, st.Failure.Message, reason)
	}
	for _, p := range parts {
		if !strings.Contains(st.Failure.Message, p) {
			s.TB.Fatalf("room %d's failure %q does not mention %q", room, st.Failure.Message, p)
		}
	}
}

// Counter reads metric name of agent i (see the package-level Counter).
func (s *Scenario) Counter(i int, name string, labels ...string) float64 {
	s.TB.Helper()
	return Counter(s.TB, s.Regs[i], name, labels...)
}

// WaitCounter waits until metric name of agent i reaches want.
func (s *Scenario) WaitCounter(i int, want float64, name string, labels ...string) {
	s.TB.Helper()
	WaitCounter(s.TB, s.Regs[i], want, name, labels...)
}

// EachRank waits until check passes ("") for every prefill rank of the peer.
func (s *Scenario) EachRank(check func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string) {
	s.TB.Helper()
	testutil.Eventually(s.TB, WaitTimeout, "every prefill rank", func() error {
		for _, r := range s.Peer.Ranks() {
			if msg := check(r, r.Counts()); msg != "" {
				return fmt.Errorf("prefill rank %d: %s", r.EngineRank, msg)
			}
		}
		return nil
	})
}

// StatusEndpoint is the ZMQ endpoint of m's status socket, where prefill
// ranks (and forgers) push status messages.
func StatusEndpoint(tb testing.TB, m *receiver.Manager) string {
	tb.Helper()
	host, port, err := net.SplitHostPort(m.StatusAddr())
	if err != nil {
		tb.Fatalf("status address %q: %v", m.StatusAddr(), err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		tb.Fatalf("status address %q: %v", m.StatusAddr(), err)
	}
	return kvwire.Endpoint(host, p)
}

func bootstrappedOrFailed(p receiver.TransferPoll) bool {
	return p >= receiver.Bootstrapped || p == receiver.Failed
}
