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

package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// rankServer is one served engine rank: its Manager (and status socket)
// and the engine's local API on its own listener.
type rankServer struct {
	rank int
	m    *receiver.Manager
	api  *localapi.EngineAPI
	ln   net.Listener
	srv  *http.Server
}

// startRanks starts a Manager per rank, each with metrics labelled by its
// engine rank, and opens each rank's engine listener. On error it closes
// what it started.
func startRanks(o *options, log *slog.Logger, reg *prometheus.Registry, metrics http.Handler) (out []*rankServer, err error) {
	defer func() {
		if err != nil {
			closeRanks(out)
			out = nil
		}
	}()
	if o.socketDir != "" {
		if err := os.MkdirAll(o.socketDir, 0o755); err != nil {
			return nil, fmt.Errorf("--socket-dir: %w", err)
		}
	}
	for _, rank := range o.engineRanks() {
		labelled := prometheus.WrapRegistererWith(prometheus.Labels{"engine_rank": strconv.Itoa(rank)}, reg)
		m, err := receiver.New(agentConfig(o, rank, log, receiver.NewMetrics(labelled)), nil)
		if err != nil {
			return out, fmt.Errorf("engine rank %d: %w", rank, err)
		}
		rs := &rankServer{rank: rank, m: m}
		out = append(out, rs)
		if rs.ln, err = rankListener(o, rank); err != nil {
			return out, fmt.Errorf("engine rank %d: %w", rank, err)
		}
		rs.api = localapi.NewEngineAPI(m, metrics, localapi.StreamOptions{QueueBytes: o.streamQueueBytes, WriteTimeout: o.streamWriteTimeout})
		rs.srv = &http.Server{
			Handler:           rs.api,
			ReadHeaderTimeout: 10 * time.Second,
			Protocols:         localapi.ServerProtocols(),
		}
	}
	return out, nil
}

// rankListener opens rank's engine socket: <socket-dir>/rank-R.sock, or
// --listen in single-rank mode.
func rankListener(o *options, rank int) (net.Listener, error) {
	if o.socketDir == "" {
		return listen(o.listen)
	}
	return listenUnixMode(o.socketPath(rank), socketDirMode)
}

// socketDirMode lets every container of the pod reach the sockets whatever
// its user: the shared emptyDir is mounted only into this pod's containers,
// so the pod is the boundary (the engine often runs as another user than
// the non-root agent).
const socketDirMode = 0o666

// closeRanks stops taking connections, fails every unfinished room (the
// engines waiting on one get their answer at once) and closes the
// Managers. Connections already open are answered until the servers shut
// down.
func closeRanks(ranks []*rankServer) {
	for _, rs := range ranks {
		if rs.ln != nil {
			rs.ln.Close() // a unix listener removes its socket file
		}
		rs.m.Close()
	}
}

func agentConfig(o *options, rank int, log *slog.Logger, metrics *receiver.Metrics) receiver.Config {
	return receiver.Config{
		EngineRank: rank, StatusAddr: o.statusAddrFor(rank), AdvertiseHost: o.advertiseHost,
		HTTPTimeout: o.httpTimeout, BootstrapTimeout: o.bootstrapTimeout, WaitingTimeout: o.waitingTimeout,
		HeartbeatInterval: o.heartbeatInterval, HeartbeatMisses: o.heartbeatMisses,
		SendTimeout: o.sendTimeout, MaxRooms: o.maxRoomsPerRank(), StatusHWM: o.budget.StatusHWM, PushHWM: o.budget.PushHWM, Curve: o.curve,
		DecodeLayout: o.decodeLayout,
		Logger:       log.With("engineRank", rank), Metrics: metrics,
	}
}

func managers(ranks []*rankServer) []*receiver.Manager {
	out := make([]*receiver.Manager, len(ranks))
	for i, rs := range ranks {
		out[i] = rs.m
	}
	return out
}
