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
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The probe address listens on the pod IP, where anything in the cluster
// can reach it; its callers are the kubelet, Prometheus and the operator,
// a handful of short requests. Every connection costs a goroutine and its
// buffers, so the server holds few and none for long.
const (
	// probeMaxConns is the most probe connections held at once; more are
	// closed as soon as they are accepted.
	probeMaxConns = 64
	// probeIdleTimeout closes a kept-alive connection that sends nothing.
	probeIdleTimeout = 30 * time.Second
	// probeHeaderTimeout bounds the wait for a request's headers (also on a
	// new connection that sends nothing at all).
	probeHeaderTimeout = 5 * time.Second
	probeReadTimeout   = 10 * time.Second
	probeWriteTimeout  = 30 * time.Second
	probeMaxHeader     = 16 << 10
)

// probeServer is the probe address's server with its timeouts.
func probeServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: probeHeaderTimeout, ReadTimeout: probeReadTimeout,
		WriteTimeout: probeWriteTimeout, IdleTimeout: probeIdleTimeout, MaxHeaderBytes: probeMaxHeader,
	}
}

// limitListener holds at most max connections: past that it closes each new
// one at once rather than leave it queued (so a flood of idle connections
// costs the agent nothing; the kubelet's next probe gets through once the
// flood's connections time out).
type limitListener struct {
	net.Listener
	slots   chan struct{}
	refused prometheus.Counter
}

func newLimitListener(l net.Listener, max int, reg prometheus.Registerer) *limitListener {
	refused := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdtopo_receiver_probe_connections_refused_total",
		Help: "Connections to the probe address closed at once because it held its maximum.",
	})
	reg.MustRegister(refused)
	return &limitListener{Listener: l, slots: make(chan struct{}, max), refused: refused}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.refused.Inc()
			c.Close()
		}
	}
}

// slotConn gives its slot back when closed (once).
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
