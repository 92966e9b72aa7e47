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

package wire

import (
	"fmt"
	"sync"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// PushPool holds one PUSH socket per prefill rank endpoint. ZMQ sockets are
// not safe for concurrent use, so each has its own lock; the pool only
// grows with the prefill ranks of live bootstrap addresses, and an
// address's sockets are closed when it is dropped.
type PushPool struct {
	ctx         *zmq.Context
	sendTimeout time.Duration
	// hwm is the number of messages queued per prefill rank before a send
	// waits (up to the send timeout): enough for bursts of rooms, small
	// enough that a dead rank cannot absorb more than the budget.
	hwm int
	// opts are set on every socket (CURVE, when on).
	opts   []zmqsock.Option
	mu     sync.Mutex
	socks  map[string]*pushSocket
	closed bool
}

type pushSocket struct {
	mu   sync.Mutex
	sock *zmq.Socket // nil once closed
	tx   *zmqsock.Sender
}

func NewPushPool(ctx *zmq.Context, sendTimeout time.Duration, hwm int, opts ...zmqsock.Option) *PushPool {
	return &PushPool{ctx: ctx, sendTimeout: sendTimeout, hwm: hwm, opts: opts, socks: make(map[string]*pushSocket)}
}

// socket returns the endpoint's socket, connecting it on first use.
func (p *PushPool) socket(endpoint string) (*pushSocket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("the agent is shutting down")
	}
	if s, ok := p.socks[endpoint]; ok {
		return s, nil
	}
	opts := append([]zmqsock.Option{zmqsock.SendHWM(p.hwm), zmqsock.SendTimeout(p.sendTimeout)}, p.opts...)
	sock, err := zmqsock.ConnectPush(p.ctx, endpoint, opts...)
	if err != nil {
		return nil, err
	}
	s := &pushSocket{sock: sock, tx: zmqsock.NewSender(sock)}
	p.socks[endpoint] = s
	return s, nil
}

// Send queues one multipart message to endpoint. ZMQ delivers multipart
// messages atomically, so a timeout can only happen on the first frame.
func (p *PushPool) Send(endpoint string, frames [][]byte) error {
	s, err := p.socket(endpoint)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sock == nil {
		return fmt.Errorf("the socket to %s was closed (its prefill was dropped)", endpoint)
	}
	if err := s.tx.Send(frames, 0); err != nil {
		if zmqsock.WouldBlock(err) {
			return fmt.Errorf("prefill rank at %s did not take the message within %v (queue full: is it alive?)", endpoint, p.sendTimeout)
		}
		return fmt.Errorf("sending to %s: %v", endpoint, err)
	}
	return nil
}

// Drop closes the sockets of endpoints (of an address that was dropped).
func (p *PushPool) Drop(endpoints []string) {
	p.mu.Lock()
	var victims []*pushSocket
	for _, ep := range endpoints {
		if s, ok := p.socks[ep]; ok {
			victims = append(victims, s)
			delete(p.socks, ep)
		}
	}
	p.mu.Unlock()
	for _, s := range victims {
		s.close()
	}
}

func (s *pushSocket) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sock != nil {
		s.tx.Close()
		s.sock.Close()
		s.sock = nil
	}
}

// Close closes every socket; sends after it fail.
func (p *PushPool) Close() {
	p.mu.Lock()
	p.closed = true
	socks := p.socks
	p.socks = nil
	p.mu.Unlock()
	for _, s := range socks {
		s.close()
	}
}
