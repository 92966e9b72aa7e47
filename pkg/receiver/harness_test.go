package receiver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pdtopo/pdtopo/internal/prefillpeer"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// testTimeout bounds every wait of a scenario; a hang fails the test.
const testTimeout = 10 * time.Second

// scenario is a real prefill peer on loopback and the decode agents of one
// layout, each with its own session, status socket and metrics.
type scenario struct {
	t      *testing.T
	layout transferplan.Layout
	set    *transferplan.PlanSet
	peer   *prefillpeer.Peer
	agents []*Manager
	regs   []*prometheus.Registry
}

// peerConfig is the prefill instance the layout describes.
func peerConfig(l transferplan.Layout) prefillpeer.Config {
	r := l.Record()
	return prefillpeer.Config{
		WorldSize: l.Prefill.TPSize, DPSize: l.Prefill.DPSize, EnableMLAL15Cache: l.MLAL15Cache,
		Buffers: kvwire.BufferLens{
			KVItemLens: r.PrefillKVItemLens, KVUnitLens: r.PrefillKVUnitLens,
			StateItemLens: r.PrefillStateItemLens, StateUnitLens: r.PrefillStateUnitLens,
		},
	}
}

// newScenario starts a peer for the layout (changed by peerMut) and one
// agent per engine rank.
func newScenario(t *testing.T, l transferplan.Layout, engineRanks []int, peerMut func(*prefillpeer.Config), cfgMut func(*Config)) *scenario {
	t.Helper()
	set, err := transferplan.Plan(l)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	pc := peerConfig(l)
	pc.Logf = t.Logf
	if peerMut != nil {
		peerMut(&pc)
	}
	peer, err := prefillpeer.Start(pc)
	if err != nil {
		t.Fatalf("starting the prefill peer: %v", err)
	}
	s := &scenario{t: t, layout: l, set: set, peer: peer}
	t.Cleanup(func() { peer.Close() })
	for _, rank := range engineRanks {
		s.addAgent(rank, cfgMut)
	}
	return s
}

func (s *scenario) addAgent(engineRank int, cfgMut func(*Config)) *Manager {
	t := s.t
	t.Helper()
	snap, err := SnapshotFor(s.set, engineRank)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := Config{
		EngineRank: engineRank, StatusAddr: "127.0.0.1:0",
		HTTPTimeout: time.Second, BootstrapTimeout: 3 * time.Second, WaitingTimeout: 5 * time.Second,
		HeartbeatInterval: time.Hour, Metrics: NewMetrics(reg),
	}
	if cfgMut != nil {
		cfgMut(&cfg)
	}
	m, err := New(cfg, &snap)
	if err != nil {
		t.Fatalf("agent for engine rank %d: %v", engineRank, err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.RegisterEngine(testEngine(snap, engineRank)); err != nil {
		t.Fatalf("registering the engine: %v", err)
	}
	s.agents = append(s.agents, m)
	s.regs = append(s.regs, reg)
	return m
}

// testEngine is a decode engine with one pointer per buffer of the layout.
func testEngine(snap PlanSnapshot, engineRank int) EngineInfo {
	info := EngineInfo{SessionID: fmt.Sprintf("127.0.0.1:%d", 17000+engineRank)}
	for i := range snap.Layout.DecodeKVItemLens {
		info.KVDataPtrs = append(info.KVDataPtrs, uint64(0x7f0000000000+i<<20))
	}
	for i := range snap.Layout.DecodeStateItemLens {
		info.StateDataPtrs = append(info.StateDataPtrs, uint64(0x7e0000000000+i<<20))
	}
	return info
}

var testRequest = TransferRequest{KVIndices: []int64{3, 4, 5}, AuxIndex: 7, DecodePrefixLen: 0}

// open opens room on every agent and sends its request once bootstrapped.
func (s *scenario) openAndRequest(room int64) {
	s.t.Helper()
	for _, m := range s.agents {
		if err := m.Open(s.peer.BootstrapAddr(), room); err != nil {
			s.t.Fatalf("open room %d: %v", room, err)
		}
	}
	for _, m := range s.agents {
		if st := waitStatus(s.t, m, room, func(p TransferPoll) bool { return p >= Bootstrapped || p == Failed }); st.Status == Failed {
			s.t.Fatalf("room %d failed while bootstrapping: %v", room, st.Failure)
		}
		if err := m.Request(room, testRequest); err != nil {
			s.t.Fatalf("request room %d: %v", room, err)
		}
	}
}

// waitStatus polls a room until cond holds, failing the test after
// testTimeout.
func waitStatus(t *testing.T, m *Manager, room int64, cond func(TransferPoll) bool) RoomStatus {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := m.Status(room)
		if err != nil {
			t.Fatalf("status of room %d: %v", room, err)
		}
		if cond(st.Status) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("room %d still %s after %v", room, st.Status, testTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

func finished(p TransferPoll) bool { return p.Finished() }

// waitFinished waits until room finished on agent i.
func (s *scenario) waitFinished(i int, room int64) RoomStatus {
	s.t.Helper()
	return waitStatus(s.t, s.agents[i], room, finished)
}

// expectFailure waits for room to fail on agent i with reason and a
// message containing every part.
func (s *scenario) expectFailure(i int, room int64, reason FailureReason, parts ...string) {
	s.t.Helper()
	st := s.waitFinished(i, room)
	if st.Status != Failed || st.Failure == nil {
		s.t.Fatalf("room %d: %s, want Failed (%s)", room, st.Status, reason)
	}
	if st.Failure.Reason != reason {
		s.t.Fatalf("room %d failed with %s (%s), want %s", room, st.Failure.Reason, st.Failure.Message, reason)
	}
	for _, p := range parts {
		if !strings.Contains(st.Failure.Message, p) {
			s.t.Fatalf("room %d's failure %q does not mention %q", room, st.Failure.Message, p)
		}
	}
}

// counter reads a counter of agent i's metrics.
func (s *scenario) counter(i int, name string, labels ...string) float64 {
	s.t.Helper()
	m := s.agents[i].metrics
	switch name {
	case "rejected":
		return testutil.ToFloat64(m.rejected.WithLabelValues(labels...))
	case "failures":
		return testutil.ToFloat64(m.failures.WithLabelValues(labels...))
	case "success":
		return testutil.ToFloat64(m.success)
	case "applied":
		return testutil.ToFloat64(m.statusAccepted)
	case "heartbeatMisses":
		return testutil.ToFloat64(m.heartbeatMisses)
	}
	s.t.Fatalf("unknown counter %s", name)
	return 0
}

// waitCounter waits until a counter reaches want.
func (s *scenario) waitCounter(i int, want float64, name string, labels ...string) {
	s.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for s.counter(i, name, labels...) < want {
		if time.Now().After(deadline) {
			s.t.Fatalf("counter %s%v is %v after %v, want %v", name, labels, s.counter(i, name, labels...), testTimeout, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// eventually waits until check returns "" (messages cross sockets
// asynchronously), failing with its last complaint after testTimeout.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(time.Millisecond)
	}
}

// eachRank runs check for every prefill rank until all pass.
func (s *scenario) eachRank(check func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string) {
	s.t.Helper()
	eventually(s.t, func() string {
		for _, r := range s.peer.Ranks() {
			if msg := check(r, r.Counts()); msg != "" {
				return fmt.Sprintf("prefill rank %d: %s", r.EngineRank, msg)
			}
		}
		return ""
	})
}
