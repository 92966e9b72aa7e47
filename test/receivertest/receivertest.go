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

// Package receivertest is the one test harness of the receiver agent: it
// starts real agents (pkg/receiver) against a real prefill peer
// (test/prefillpeer) on loopback, drives rooms and reads metrics. The
// receiver's own scenario and fault tests use it as external tests
// (package receiver_test), as do the local API's and the command's.
package receivertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

// StartPeer starts a prefill peer for l, closed when the test ends. In tests
// (not benchmarks, which measure the agent) the peer executes every request's
// fragments byte by byte against l and fails rooms whose bytes would land
// wrong.
func StartPeer(tb testing.TB, l planv1.Layout, mut func(*prefillpeer.Config)) *prefillpeer.Peer {
	tb.Helper()
	pc := prefillpeer.ConfigFor(l)
	if _, benchmark := tb.(*testing.B); !benchmark {
		pc.Transfer = &l
	}
	if mut != nil {
		mut(&pc)
	}
	p, err := prefillpeer.Start(pc)
	if err != nil {
		tb.Fatalf("starting the prefill peer: %v", err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// Snapshot plans l and picks engineRank's plan.
func Snapshot(tb testing.TB, l planv1.Layout, engineRank int) receiver.PlanSnapshot {
	tb.Helper()
	set, err := planv1.Plan(l)
	if err != nil {
		tb.Fatalf("plan: %v", err)
	}
	snap, err := receiver.SnapshotFor(set, engineRank)
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

// StartAgent starts a Manager for engineRank with snap (short test
// timeouts, metrics in a fresh registry), closed when the test ends.
func StartAgent(tb testing.TB, snap *receiver.PlanSnapshot, engineRank int, mut func(*receiver.Config)) (*receiver.Manager, *prometheus.Registry) {
	tb.Helper()
	reg := prometheus.NewRegistry()
	cfg := receiver.Config{
		EngineRank: engineRank, StatusAddr: "127.0.0.1:0",
		HTTPTimeout: time.Second, BootstrapTimeout: 3 * time.Second, WaitingTimeout: 30 * time.Second,
		HeartbeatInterval: time.Hour, Metrics: receiver.NewMetrics(reg),
	}
	if mut != nil {
		mut(&cfg)
	}
	m, err := receiver.New(cfg, snap)
	if err != nil {
		tb.Fatalf("agent: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return m, reg
}

// Engine is a decode engine with one pointer per buffer of the plan's layout.
func Engine(snap receiver.PlanSnapshot, engineRank int) receiver.EngineInfo {
	info := receiver.EngineInfo{SessionID: fmt.Sprintf("127.0.0.1:%d", 17000+engineRank)}
	for i := range snap.Layout.DecodeKVItemLens {
		info.KVDataPtrs = append(info.KVDataPtrs, uint64(0x7f0000000000+i<<20))
	}
	for i := range snap.Layout.DecodeStateItemLens {
		info.StateDataPtrs = append(info.StateDataPtrs, uint64(0x7e0000000000+i<<20))
	}
	return info
}

// Request is a transfer request every layout of the fixtures accepts.
var Request = receiver.TransferRequest{KVIndices: []int64{3, 4, 5}, AuxIndex: 7}

// OpenAndRequest opens room on m against bootstrapAddr and sends req once
// the room is bootstrapped.
func OpenAndRequest(tb testing.TB, m *receiver.Manager, bootstrapAddr string, room int64, req receiver.TransferRequest) {
	tb.Helper()
	if err := m.Open(bootstrapAddr, room); err != nil {
		tb.Fatalf("open room %d: %v", room, err)
	}
	st := WaitStatus(tb, m, room, bootstrappedOrFailed)
	if st.Status == receiver.Failed {
		tb.Fatalf("room %d failed while bootstrapping: %v", room, st.Failure)
	}
	if err := m.Request(room, req); err != nil {
		tb.Fatalf("request room %d: %v", room, err)
	}
}
