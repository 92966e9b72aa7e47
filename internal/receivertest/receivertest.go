// Package receivertest starts real receiver agents against a real prefill
// peer on loopback, for the tests and benchmarks of the packages built on
// pkg/receiver (its own tests have their own harness, as it cannot import
// this package).
package receivertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/internal/prefillpeer"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// PeerConfig is the prefill instance a layout describes.
func PeerConfig(l transferplan.Layout) prefillpeer.Config {
	r := l.Record()
	return prefillpeer.Config{
		WorldSize: l.Prefill.TPSize, DPSize: l.Prefill.DPSize, EnableMLAL15Cache: l.MLAL15Cache,
		Buffers: kvwire.BufferLens{
			KVItemLens: r.PrefillKVItemLens, KVUnitLens: r.PrefillKVUnitLens,
			StateItemLens: r.PrefillStateItemLens, StateUnitLens: r.PrefillStateUnitLens,
		},
	}
}

// StartPeer starts a prefill peer for l, closed when the test ends.
func StartPeer(tb testing.TB, l transferplan.Layout, mut func(*prefillpeer.Config)) *prefillpeer.Peer {
	tb.Helper()
	pc := PeerConfig(l)
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
func Snapshot(tb testing.TB, l transferplan.Layout, engineRank int) receiver.PlanSnapshot {
	tb.Helper()
	set, err := transferplan.Plan(l)
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
