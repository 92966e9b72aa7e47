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
	"errors"
	"fmt"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// statusPollInterval is how long a receive waits before checking whether
// the agent is stopping (ZMQ sockets cannot be closed from another
// goroutine).
const statusPollInterval = 100 * time.Millisecond

// MaxStatusMessage caps a status message: a handful of numbers and a short
// candidate list. libzmq drops a larger message unread (and the connection).
const MaxStatusMessage = 64 << 10

// Without CURVE the status port is served by zmqsock's Go ZMTP listener,
// which refuses a message past a status's frames or bytes while it
// arrives; libzmq would buffer the whole message first, whatever its size.
// With CURVE, libzmq's handshake authenticates a peer before it can send
// anything, so libzmq serves it.
const (
	// The status connections held: one per prefill rank that sends this
	// rank statuses, each costing at most one status message (64 KiB) and a
	// small buffer. As many as the rank's status queue holds messages (its
	// share of the memory budget), within these bounds.
	minStatusConns = 256
	maxStatusConns = 1024
	// statusHandshakeTimeout bounds a connection's greeting and READY;
	// statusMessageTimeout a message's first frame to its last.
	statusHandshakeTimeout = 10 * time.Second
	statusMessageTimeout   = 10 * time.Second
)

// statusSocket is the PULL socket prefill ranks push status messages to.
type statusSocket struct {
	sock     *zmq.Socket           // with CURVE
	pull     *zmqsock.PullListener // without
	endpoint string                // as bound, tcp://IP:PORT
	port     int
}

// bindStatusSocket binds HOST:PORT (port 0: any free port) with a receive
// queue of hwm messages. curve holds the CURVE server's options (none:
// CURVE is off and the Go listener serves).
func bindStatusSocket(ctx *zmq.Context, addr string, hwm int, curve ...zmqsock.Option) (*statusSocket, error) {
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if len(curve) == 0 {
		pull, p, err := zmqsock.ListenPull(host, port, zmqsock.PullConfig{
			MaxFrames: kvwire.StatusFrames, MaxBytes: MaxStatusMessage, MaxConns: min(max(hwm, minStatusConns), maxStatusConns), Queue: hwm,
			HandshakeTimeout: statusHandshakeTimeout, MessageTimeout: statusMessageTimeout,
		})
		if err != nil {
			return nil, fmt.Errorf("binding the status socket on %s: %v", addr, err)
		}
		return &statusSocket{pull: pull, endpoint: kvwire.Endpoint(host, p), port: p}, nil
	}
	opts := append([]zmqsock.Option{zmqsock.RecvTimeout(statusPollInterval), zmqsock.MaxMessageSize(MaxStatusMessage), zmqsock.RecvHWM(hwm)}, curve...)
	sock, p, err := zmqsock.BindPull(ctx, host, port, opts...)
	if err != nil {
		return nil, fmt.Errorf("binding the status socket on %s: %v", addr, err)
	}
	return &statusSocket{sock: sock, endpoint: kvwire.Endpoint(host, p), port: p}, nil
}

// serve receives messages and hands each, with the IP of the connection it
// came by, to handle until stop is closed, then closes the socket (from the
// goroutine that used it). A message of more frames or bytes than a status
// has goes to dropped instead, unread.
func (s *statusSocket) serve(stop <-chan struct{}, handle func(frames [][]byte, sender string), dropped func(*zmqsock.OversizeError, string)) {
	if s.pull != nil {
		s.servePull(stop, handle, dropped)
		return
	}
	defer s.sock.Close()
	r := zmqsock.NewReceiver(s.sock, kvwire.StatusFrames, MaxStatusMessage)
	defer r.Close()
	for {
		select {
		case <-stop:
			return
		default:
		}
		frames, sender, err := r.Recv(0, true)
		var big *zmqsock.OversizeError
		switch {
		case err == nil:
			handle(frames, sender)
		case errors.As(err, &big):
			dropped(big, sender)
		case zmqsock.Retry(err):
		case zmqsock.Terminated(err):
			return
		default:
			time.Sleep(statusPollInterval / 10) // an unexpected error must not spin
		}
	}
}

// servePull is serve for the Go listener; a connection dropped for a
// protocol error is not a status and is not counted as one.
func (s *statusSocket) servePull(stop <-chan struct{}, handle func(frames [][]byte, sender string), dropped func(*zmqsock.OversizeError, string)) {
	defer s.pull.Close()
	for {
		select {
		case <-stop:
			return
		case m := <-s.pull.Messages():
			var big *zmqsock.OversizeError
			switch {
			case m.Err == nil:
				handle(m.Frames, m.Peer)
			case errors.As(m.Err, &big):
				dropped(big, m.Peer)
			}
		}
	}
}
