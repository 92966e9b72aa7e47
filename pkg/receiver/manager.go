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
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// EngineInfo is what the decode engine tells the agent once, before any
// room (the wires' vocabulary, wire.EngineInfo).
type EngineInfo = wire.EngineInfo

// engineWire is the wire info registers for: the cache-contract wire when it
// carries a contract, else v1 (the local API's registration kinds).
func engineWire(info *EngineInfo) kvwire.Wire {
	if info.Contract != nil {
		return kvwire.WireCacheContract
	}
	return kvwire.WireV1
}

// routing is the plan sets a rank holds with the caches learned for them;
// replacing the plans replaces both, so no cache outlives the plan it was
// made for. view is the current set's (its hash is PlanHash), and
// peers.views every set's, the current one first.
type routing struct {
	view  *routeView
	peers *peerTable
}

// Manager runs the decode side of the handshake for one decode engine rank.
// It is safe for concurrent use.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	start   time.Time

	rooms   *roomTable
	routing atomic.Pointer[routing]
	engine  atomic.Pointer[registration]
	engMu   sync.Mutex // serialises registrations, streams and plan installs (InstallPlans)
	// generations counts the registrations accepted; stream is the rank's
	// current event stream (nil when none). Both guarded by engMu.
	generations uint64
	stream      *Stream

	zctx   *zmq.Context
	zap    *zmqsock.ZAPHandler // nil unless CURVE is on
	zapErr chan error          // AuthFailure's; nil unless CURVE is on
	status *statusSocket
	push   *wire.PushPool
	boot   *bootstrapClient

	// ctx ends on Close, cancelling bootstrap calls in flight.
	ctx       context.Context
	cancel    context.CancelFunc
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	closed    atomic.Bool
	// lifeMu orders starting a resolver (wg.Add) before Close's wg.Wait.
	lifeMu    sync.Mutex
	rejectLog logLimiter
}

// New binds the status socket and starts the agent's background loops
// (status receiver, deadline sweeper, heartbeat). plan may be nil and set
// later with SetPlan; rooms are refused until then.
func New(cfg Config, plan *PlanSnapshot) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Manager{
		cfg: cfg, log: cfg.Logger, metrics: cfg.Metrics, start: time.Now(),
		rooms: newRoomTable(cfg.MaxRooms, int64(cfg.BootstrapTimeout), int64(cfg.WaitingTimeout)),
		boot:  newBootstrapClient(cfg.HTTPClient, cfg.HTTPTimeout),
		stop:  make(chan struct{}),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if plan != nil {
		if err := m.SetPlan(*plan); err != nil {
			return nil, err
		}
	}
	if m.zctx, err = zmq.NewContext(); err != nil {
		return nil, err
	}
	m.zctx.SetRetryAfterEINTR(true) // the Go runtime interrupts blocking calls with signals
	var statusOpts, pushOpts []zmqsock.Option
	if cfg.Curve != nil {
		if statusOpts, pushOpts, err = m.startCurve(cfg.Curve); err != nil {
			m.zctx.Term()
			return nil, err
		}
	}
	if m.status, err = bindStatusSocket(m.zctx, cfg.StatusAddr, cfg.StatusHWM, statusOpts...); err != nil {
		m.closeZAP()
		m.zctx.Term()
		return nil, err
	}
	m.push = wire.NewPushPool(m.zctx, cfg.SendTimeout, cfg.PushHWM, pushOpts...)
	m.metrics.countOpenRooms(m.rooms.len)
	m.wg.Add(3)
	go func() { defer m.wg.Done(); m.status.serve(m.stop, m.handleStatus, m.dropOversizeStatus) }()
	go func() { defer m.wg.Done(); m.sweep() }()
	go func() { defer m.wg.Done(); m.heartbeat() }()
	m.log.Info("receiver agent started", "engineRank", cfg.EngineRank, "statusEndpoint", m.status.endpoint, "advertised", m.StatusAddr())
	return m, nil
}

// StatusAddr is the IP:PORT prefill ranks send status messages to.
func (m *Manager) StatusAddr() string {
	return net.JoinHostPort(m.cfg.AdvertiseHost, strconv.Itoa(m.status.port))
}

// SetPlan installs a (new) plan for this rank. Rooms already open keep the
// plan they were opened with; caches learned for the old plan are dropped.
func (m *Manager) SetPlan(snap PlanSnapshot) error {
	return InstallPlans([]*Manager{m}, []PlanSnapshot{snap})
}

// CheckPlan reports whether SetPlan would accept snap now, without
// installing it. (An agent serving several ranks installs with
// InstallPlans, which checks and installs every rank's plan at once.)
func (m *Manager) CheckPlan(snap PlanSnapshot) error {
	view, err := m.checkPlan(snap)
	if err != nil {
		return err
	}
	if eng := m.engine.Load(); eng != nil {
		return checkEngine(eng, view)
	}
	return nil
}

func (m *Manager) checkPlan(snap PlanSnapshot) (*routeView, error) {
	return snap.check(m.cfg.EngineRank)
}

// Readiness reports whether the agent can serve an engine: it is running
// and has a plan. /readyz answers with it.
func (m *Manager) Readiness() error {
	switch {
	case m.closed.Load():
		return errorf(CodeAgentShuttingDown, "the agent is shutting down")
	case m.routing.Load() == nil:
		return errorf(CodeNoPlanLoaded, "no route plan is loaded for engine rank %d", m.cfg.EngineRank)
	}
	return nil
}

// Ready reports whether rooms can be opened: Readiness, and the engine has
// registered.
func (m *Manager) Ready() error {
	if err := m.Readiness(); err != nil {
		return err
	}
	if m.engine.Load() == nil {
		return errorf(CodeEngineNotRegistered, "the engine has not registered its session and buffers (PUT /v1/engine) yet")
	}
	return nil
}

// EngineRegistered reports whether RegisterEngine succeeded.
func (m *Manager) EngineRegistered() bool { return m.engine.Load() != nil }

// OpenRooms is the number of rooms opened and not cleared.
func (m *Manager) OpenRooms() int { return m.rooms.len() }

// startResolver runs a resolver for pa unless the agent is closing.
func (m *Manager) startResolver(t *peerTable, pa *peerAddr) {
	m.lifeMu.Lock()
	defer m.lifeMu.Unlock()
	if m.closed.Load() {
		return // the rooms waiting on it stay Bootstrapping: the agent is gone
	}
	m.wg.Add(1)
	go m.resolve(t, pa)
}

func (m *Manager) closeZAP() {
	m.closed.Store(true) // watchZAP: a handler stopped on purpose is no failure
	if m.zap != nil {
		m.zap.Close()
	}
}

// now is monotonic nanoseconds since the Manager started.
func (m *Manager) now() int64 { return int64(time.Since(m.start)) }

// Close fails every unfinished room (ReasonShutdown: an engine waiting on
// one learns at once, rather than when its connection drops), then stops
// the loops and closes every socket. Rooms stay readable.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.lifeMu.Lock()
		m.closed.Store(true)
		m.lifeMu.Unlock()
		m.rooms.each(func(s *roomShard, e *roomEntry) {
			if s.fail(e, ReasonShutdown, fmt.Sprintf("the receiver agent of engine rank %d shut down before room %d finished (it was %s)", m.cfg.EngineRank, e.id, e.state.Status())) {
				m.metrics.roomFailed(ReasonShutdown)
			}
		})
		m.engMu.Lock()
		if s := m.stream; s != nil {
			m.stream = nil
			m.endStream(s, ReasonShutdown, fmt.Sprintf("the receiver agent of engine rank %d shut down", m.cfg.EngineRank))
		}
		m.engMu.Unlock()
		close(m.stop)
		m.cancel()
		m.wg.Wait()
		m.push.Close()
		m.closeZAP()
		m.zctx.Term()
	})
	return nil
}

// EngineRank is the decode engine rank the Manager serves.
func (m *Manager) EngineRank() int { return m.cfg.EngineRank }
