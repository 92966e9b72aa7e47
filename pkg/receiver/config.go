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
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Defaults follow the reference engine where it has one.
const (
	DefaultHTTPTimeout       = 5 * time.Second // the reference's per-rank /route timeout
	DefaultBootstrapTimeout  = 30 * time.Second
	DefaultWaitingTimeout    = 300 * time.Second // TOKENSPEED_DISAGGREGATION_WAITING_TIMEOUT
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultHeartbeatFloor    = 2 * time.Second // the reference never checks more often
	DefaultHeartbeatMisses   = 2
	DefaultSendTimeout       = 2 * time.Second
	DefaultMaxRooms          = 1 << 20
)

// Config configures a Manager. Zero durations and counts take the defaults.
type Config struct {
	// EngineRank is the decode engine rank this agent serves.
	EngineRank int
	// StatusAddr is HOST:PORT where the status PULL socket binds; port 0
	// picks a free port. HOST must be an IP address.
	StatusAddr string
	// AdvertiseHost is the IP prefill ranks push status messages to; it
	// defaults to StatusAddr's host, which must then not be a wildcard.
	AdvertiseHost string

	// HTTPTimeout bounds each call to a bootstrap server (parallel info, a
	// rank's address, a heartbeat).
	HTTPTimeout time.Duration
	// BootstrapTimeout bounds the time a room may spend in Bootstrapping
	// (the calls to the bootstrap server and the registrations).
	BootstrapTimeout time.Duration
	// WaitingTimeout bounds the time a bootstrapped room may stay unfinished
	// (restarted when its request is sent), whatever its state.
	WaitingTimeout time.Duration
	// HeartbeatInterval is how often each known bootstrap address is
	// checked; it is raised to HeartbeatFloor.
	HeartbeatInterval time.Duration
	// HeartbeatFloor is the smallest interval honoured (default 2 s, as in
	// the reference; tests lower it).
	HeartbeatFloor time.Duration
	// HeartbeatMisses consecutive failed checks drop an address and fail its
	// unfinished rooms.
	HeartbeatMisses int
	// SendTimeout bounds a send to a prefill rank whose queue is full.
	SendTimeout time.Duration
	// MaxRooms bounds the open rooms; opening more is refused.
	MaxRooms int
	// Curve, when set, runs ZMQ CURVE with the prefill ranks.
	Curve *CurveKeys
	// DecodeLayout, when set, is the decode layout the pod was admitted
	// under (the agent's --decode-layout): an engine that says another TP
	// at registration is refused (CodeDecodeLayoutMismatch).
	DecodeLayout *transferplan.Parallelism
	// StatusHWM bounds the status messages libzmq queues per connection to
	// the status socket; PushHWM the messages it queues per prefill rank.
	// NewBudget derives all three from the container's memory.
	StatusHWM, PushHWM int

	Logger  *slog.Logger
	Metrics *Metrics
	// HTTPClient talks to bootstrap servers; nil builds one without proxies.
	HTTPClient *http.Client
}

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	setDur(&c.HTTPTimeout, DefaultHTTPTimeout)
	setDur(&c.BootstrapTimeout, DefaultBootstrapTimeout)
	setDur(&c.WaitingTimeout, DefaultWaitingTimeout)
	setDur(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	setDur(&c.HeartbeatFloor, DefaultHeartbeatFloor)
	setDur(&c.SendTimeout, DefaultSendTimeout)
	c.HeartbeatInterval = max(c.HeartbeatInterval, c.HeartbeatFloor)
	if c.HeartbeatMisses <= 0 {
		c.HeartbeatMisses = DefaultHeartbeatMisses
	}
	if c.MaxRooms <= 0 {
		c.MaxRooms = DefaultMaxRooms
	}
	if c.StatusHWM <= 0 {
		c.StatusHWM = DefaultStatusHWM
	}
	if c.PushHWM <= 0 {
		c.PushHWM = DefaultPushHWM
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.EngineRank < 0 {
		return c, fmt.Errorf("engine rank %d is negative", c.EngineRank)
	}
	host, _, err := splitHostPort(c.StatusAddr)
	if err != nil {
		return c, fmt.Errorf("status address: %w", err)
	}
	if c.AdvertiseHost == "" {
		c.AdvertiseHost = host
	}
	if ip := net.ParseIP(c.AdvertiseHost); ip == nil || ip.IsUnspecified() {
		return c, fmt.Errorf("advertised status host %q must be an IP address prefill ranks can reach (set AdvertiseHost when binding a wildcard)", c.AdvertiseHost)
	}
	return c, nil
}

func setDur(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// splitHostPort splits HOST:PORT where HOST is an IP and PORT 0..65535.
func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not HOST:PORT: %v", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: port %q is not a number in 0..65535", addr, p)
	}
	if net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("%q: host %q is not an IP address", addr, host)
	}
	return host, port, nil
}
