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

// Package zmqsock is the ZMQ socket plumbing both sides of the KV handshake
// share: binding a PULL socket on a free port and reading the port back,
// connecting a PUSH socket, telling a receive or send that merely timed out
// (try again) from one that failed, and receiving or sending a whole
// multipart message in one call into libzmq (Receiver and Sender, in
// multipart.go, which says why), CURVE with a ZAP handler that fails
// closed (zap.go, zapenforce.go), and a PULL listener in Go that speaks
// ZMTP 3 itself and bounds each message while it arrives (zmtp.go,
// zmtppull.go), for sockets without CURVE. The agent (pkg/receiver) and the
// prefill-side peer (test/prefillpeer) use it; endpoints are written by
// kvwire.Endpoint. The protocol is in docs/wire.md.
//
// A ZMQ socket is not safe for concurrent use: whoever creates one keeps it
// on one goroutine (or guards it) and closes it there.
package zmqsock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Option sets one socket option before the socket binds or connects.
type Option func(*zmq.Socket) error

// RecvTimeout bounds a receive, so a receive loop can check whether it
// should stop (a socket cannot be closed from another goroutine).
func RecvTimeout(d time.Duration) Option {
	return func(s *zmq.Socket) error { return s.SetRcvtimeo(d) }
}

// SendTimeout bounds a send on a full queue.
func SendTimeout(d time.Duration) Option {
	return func(s *zmq.Socket) error { return s.SetSndtimeo(d) }
}

// Linger is how long Close waits for unsent messages (0 unless set).
func Linger(d time.Duration) Option { return func(s *zmq.Socket) error { return s.SetLinger(d) } }

// MaxMessageSize drops larger incoming messages unread.
func MaxMessageSize(n int64) Option { return func(s *zmq.Socket) error { return s.SetMaxmsgsize(n) } }

// RecvHWM bounds the messages queued for receiving.
func RecvHWM(n int) Option { return func(s *zmq.Socket) error { return s.SetRcvhwm(n) } }

// SendHWM bounds the messages queued for sending.
func SendHWM(n int) Option { return func(s *zmq.Socket) error { return s.SetSndhwm(n) } }

// BindPull binds a PULL socket to host:port; port 0 lets the system choose
// a free port, which is read back and returned. Linger is 0 unless an
// option sets it. On error nothing is left open.
func BindPull(zctx *zmq.Context, host string, port int, options ...Option) (*zmq.Socket, int, error) {
	sock, err := newSocket(zctx, zmq.PULL, host, options)
	if err != nil {
		return nil, 0, err
	}
	ep := kvwire.Endpoint(host, port)
	if port == 0 { // ZMQ's wildcard port
		ep = ep[:strings.LastIndexByte(ep, ':')] + ":*"
	}
	if err := sock.Bind(ep); err != nil {
		sock.Close()
		return nil, 0, fmt.Errorf("binding %s: %w", ep, err)
	}
	bound, err := sock.GetLastEndpoint()
	if err == nil {
		port, err = strconv.Atoi(bound[strings.LastIndexByte(bound, ':')+1:])
	}
	if err != nil {
		sock.Close()
		return nil, 0, fmt.Errorf("reading back the port %s was bound to: %w", ep, err)
	}
	return sock, port, nil
}

// ConnectPush connects a PUSH socket to endpoint (tcp://host:port). Linger is
// 0 unless an option sets it. A nil zctx means ZMQ's default context.
func ConnectPush(zctx *zmq.Context, endpoint string, options ...Option) (*zmq.Socket, error) {
	sock, err := newSocket(zctx, zmq.PUSH, "", options)
	if err != nil {
		return nil, err
	}
	if err := sock.Connect(endpoint); err != nil {
		sock.Close()
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	return sock, nil
}

func newSocket(zctx *zmq.Context, t zmq.Type, host string, options []Option) (*zmq.Socket, error) {
	var sock *zmq.Socket
	var err error
	if zctx == nil {
		sock, err = zmq.NewSocket(t)
	} else {
		sock, err = zctx.NewSocket(t)
	}
	if err != nil {
		return nil, err
	}
	all := append([]Option{Linger(0)}, options...)
	if strings.Contains(host, ":") {
		all = append(all, func(s *zmq.Socket) error { return s.SetIpv6(true) })
	}
	for _, set := range all {
		if err := set(sock); err != nil {
			sock.Close()
			return nil, err
		}
	}
	return sock, nil
}

// WouldBlock reports whether err is EAGAIN: a receive or send timeout
// passed, or a non-blocking send found the queue full.
func WouldBlock(err error) bool { return zmq.AsErrno(err) == zmq.Errno(syscall.EAGAIN) }

// Retry reports whether a receive loop should simply receive again: the
// receive timed out (EAGAIN) or a signal interrupted it (EINTR).
func Retry(err error) bool {
	return WouldBlock(err) || zmq.AsErrno(err) == zmq.Errno(syscall.EINTR)
}

// Terminated reports whether the socket's context is being terminated: a
// receive loop ends.
func Terminated(err error) bool { return errors.Is(err, zmq.ETERM) || zmq.AsErrno(err) == zmq.ETERM }
