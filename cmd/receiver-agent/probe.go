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
// buffers, so the server holds few and none for long, and no one source
// address may hold more than its share: the kubelet's liveness probe
// comes from the node's address, and a tenant holding connections from its
// own pod cannot leave it without a slot (and the agent restarted).
const (
	// probeMaxConns is the most probe connections held at once; more are
	// closed as soon as they are accepted.
	probeMaxConns = 64
	// probeMaxConnsPerSource is the most held from one IP address: one
	// source takes at most an eighth, so seven eighths stay for the others
	// (the kubelet, Prometheus and the operator need one or two each).
	probeMaxConnsPerSource = probeMaxConns / 8
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

// limitListener holds at most max connections, and at most perSource from
// one IP address: past either it closes each new connection at once rather
// than leave it queued (so a flood of idle connections costs the agent
// nothing, and one from a single address leaves the others their slots).
type limitListener struct {
	net.Listener
	max, perSource int
	refused        prometheus.Counter

	mu    sync.Mutex
	held  int
	bySrc map[string]int
}

func newLimitListener(l net.Listener, max, perSource int, reg prometheus.Registerer) *limitListener {
	refused := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdtopo_receiver_probe_connections_refused_total",
		Help: "Connections to the probe address closed at once because it held its maximum, in all or from the connection's source address.",
	})
	reg.MustRegister(refused)
	return &limitListener{Listener: l, max: max, perSource: perSource, refused: refused, bySrc: map[string]int{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceIP(c.RemoteAddr())
		if !l.take(src) {
			l.refused.Inc()
			c.Close()
			continue
		}
		return &slotConn{Conn: c, release: func() { l.give(src) }}, nil
	}
}

// take holds a slot for a connection from src, if one is free.
func (l *limitListener) take(src string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= l.max || l.bySrc[src] >= l.perSource {
		return false
	}
	l.held++
	l.bySrc[src]++
	return true
}

func (l *limitListener) give(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held--
	if l.bySrc[src]--; l.bySrc[src] <= 0 {
		delete(l.bySrc, src) // the map holds only sources with connections open
	}
}

// sourceIP is the IP of a connection's remote address (the whole address
// if it has no port, as for a unix socket).
func sourceIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
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
