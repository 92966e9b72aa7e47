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
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a room, as counted by pdtopo_receiver_rooms_total.
const (
	OutcomeSuccess = "success"
	OutcomeFailed  = "failed"
	// OutcomeAbandoned: the engine cleared the room before it finished.
	OutcomeAbandoned = "abandoned"
)

// Reasons a status message was ignored, beside kvwire's decode reasons.
const (
	RejectUnknownRoom = "UnknownRoom"
	// RejectUnexpectedRank: a TP rank of the prefill DP group that the
	// decode rank's plan neither targets nor releases as idle.
	RejectUnexpectedRank = "UnexpectedRank"
	// RejectDummyTarget: a dummy target (MLA with more prefill than decode
	// ranks) owes no status; counting it would complete a room before the
	// real target's data arrived.
	RejectDummyTarget = "DummyTarget"
	// RejectIdlePrefillRank: an idle prefill rank released by decode TP rank 0
	// owes no status either.
	RejectIdlePrefillRank = "IdlePrefillRank"
	// RejectRankOutOfRange: a rank number no prefill DP group of the layout
	// has (an engine rank of another DP group, or a forgery). Status frames
	// do not name the DP group, so a rank of another group that sends a TP
	// rank this room expects cannot be told apart on the wire.
	RejectRankOutOfRange = "RankOutOfRange"
	// RejectSenderAddress: the message names a rank the room expects but
	// did not come from the address the room sent that rank its request
	// (the prefill rank's rank_ip): anyone who can reach the status socket
	// could send it.
	RejectSenderAddress    = "SenderAddressMismatch"
	RejectDuplicateSuccess = "DuplicateSuccess"
	RejectRoomFinished     = "RoomFinished"
	RejectRoomNotRequested = "RoomNotRequested"
	RejectUnknownStatus    = "UnknownStatus"
)

// Metrics are the agent's Prometheus metrics. A nil *Metrics records
// nothing, so that library users and tests need not register any.
type Metrics struct {
	rooms           *prometheus.CounterVec
	success, failed prometheus.Counter
	abandoned       prometheus.Counter
	failures        *prometheus.CounterVec
	openRooms       prometheus.GaugeFunc
	waiters         prometheus.Gauge
	latency         prometheus.Histogram
	statusAccepted  prometheus.Counter
	rejected        *prometheus.CounterVec
	heartbeatMisses prometheus.Counter
	addressesLost   prometheus.Counter
	streams         prometheus.Gauge
	streamResyncs   prometheus.Counter
	curveDenied     prometheus.Counter
	openRoomsFn     atomic.Pointer[func() int]
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rooms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdtopo_receiver_rooms_total", Help: "Rooms that finished, by outcome (success, failed, abandoned: cleared unfinished).",
		}, []string{"outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdtopo_receiver_room_failures_total", Help: "Failed rooms by failure reason.",
		}, []string{"reason"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "pdtopo_receiver_room_open_to_success_seconds", Help: "Time from opening a room to its Success.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 16), // 100µs … ~90 s
		}),
		statusAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pdtopo_receiver_status_messages_total", Help: "Status messages from prefill ranks applied to a room.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdtopo_receiver_status_messages_rejected_total", Help: "Status messages ignored, by reason (malformed, unknown room, unexpected rank, …).",
		}, []string{"reason"}),
		heartbeatMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pdtopo_receiver_heartbeat_misses_total", Help: "Bootstrap server health checks that failed.",
		}),
		addressesLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pdtopo_receiver_prefill_connections_lost_total", Help: "Bootstrap addresses dropped after consecutive heartbeat misses.",
		}),
	}
	m.streams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdtopo_receiver_engine_streams", Help: "Engine event streams open (0 or 1 per rank).",
	})
	m.streamResyncs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdtopo_receiver_stream_resyncs_total", Help: "Times an engine read its stream too slowly: the agent dropped events and sent the stream's whole table instead.",
	})
	m.curveDenied = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdtopo_receiver_status_connections_denied_total", Help: "Connections to the status socket refused with CURVE on: the client did not hold the prefill's key.",
	})
	m.waiters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdtopo_receiver_room_waiters", Help: "Engine calls waiting for a room to finish (long polls of GET /v1/rooms/{room}?wait=).",
	})
	m.success = m.rooms.WithLabelValues(OutcomeSuccess)
	m.failed = m.rooms.WithLabelValues(OutcomeFailed)
	m.abandoned = m.rooms.WithLabelValues(OutcomeAbandoned)
	m.openRooms = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pdtopo_receiver_open_rooms", Help: "Rooms opened and not yet cleared.",
	}, func() float64 {
		if fn := m.openRoomsFn.Load(); fn != nil {
			return float64((*fn)())
		}
		return 0
	})
	reg.MustRegister(m.waiters, m.rooms, m.failures, m.latency, m.statusAccepted, m.rejected, m.heartbeatMisses, m.addressesLost, m.openRooms, m.streams, m.streamResyncs, m.curveDenied)
	return m
}

// countOpenRooms makes the open-rooms gauge read fn.
func (m *Metrics) countOpenRooms(fn func() int) {
	if m != nil {
		m.openRoomsFn.Store(&fn)
	}
}

func (m *Metrics) roomSucceeded(openToSuccess time.Duration) {
	if m != nil {
		m.success.Inc()
		m.latency.Observe(openToSuccess.Seconds())
	}
}

func (m *Metrics) roomFailed(reason FailureReason) {
	if m != nil {
		m.failed.Inc()
		m.failures.WithLabelValues(string(reason)).Inc()
	}
}

func (m *Metrics) roomAbandoned() {
	if m != nil {
		m.abandoned.Inc()
	}
}

func (m *Metrics) statusApplied() {
	if m != nil {
		m.statusAccepted.Inc()
	}
}

func (m *Metrics) statusRejected(reason string) {
	if m != nil {
		m.rejected.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) statusConnectionDenied() {
	if m != nil {
		m.curveDenied.Inc()
	}
}

func (m *Metrics) heartbeatMissed() {
	if m != nil {
		m.heartbeatMisses.Inc()
	}
}

func (m *Metrics) addressLost() {
	if m != nil {
		m.addressesLost.Inc()
	}
}

// waiting counts an engine call waiting for a room; the returned func
// ends it.
func (m *Metrics) waiting() func() {
	if m == nil {
		return func() {}
	}
	m.waiters.Inc()
	return m.waiters.Dec
}

// streamOpened and streamEnded count the open engine streams.
func (m *Metrics) streamOpened() {
	if m != nil {
		m.streams.Inc()
	}
}

func (m *Metrics) streamEnded() {
	if m != nil {
		m.streams.Dec()
	}
}

func (m *Metrics) streamResynced() {
	if m != nil {
		m.streamResyncs.Inc()
	}
}
