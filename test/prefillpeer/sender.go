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

package prefillpeer

import (
	"runtime"
	"strings"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// outgoing is one status message for a decode endpoint.
type outgoing struct {
	endpoint string
	status   kvwire.Status
}

// statusEndpoint is where the reference sends a status: the decode IP up to
// any ':' (it splits the address), then the status port.
func statusEndpoint(decodeIP string, port int) string {
	host, _, _ := strings.Cut(decodeIP, ":")
	return kvwire.Endpoint(host, port)
}

// pushCache holds PUSH sockets, one per decode endpoint, kept open like the
// reference's socket cache. ZMQ sockets are not safe for concurrent use: a
// cache belongs to one goroutine.
type pushCache struct {
	zctx    *zmq.Context
	opts    []zmqsock.Option
	sockets map[string]*pushSocket
	onSent  func(SentStatus)
	onError func(room int64, detail string, err error)
}

func (c *pushCache) send(o outgoing) {
	sock, err := c.socket(o.endpoint)
	if err == nil {
		// Never block the rank on a decode side that stopped reading.
		err = sock.tx.Send(o.status.Frames(), zmq.DONTWAIT)
	}
	if err != nil {
		detail := "to " + o.endpoint
		if zmqsock.WouldBlock(err) {
			detail += ": the decode side is not taking messages (queue full)"
		}
		c.onError(o.status.Room, detail, err)
		return
	}
	c.onSent(SentStatus{Endpoint: o.endpoint, Status: o.status})
}

// pushSocket is one cached socket and the sender that writes whole
// messages to it.
type pushSocket struct {
	sock *zmq.Socket
	tx   *zmqsock.Sender
}

func (c *pushCache) socket(endpoint string) (*pushSocket, error) {
	if s, ok := c.sockets[endpoint]; ok {
		return s, nil
	}
	sock, err := zmqsock.ConnectPush(c.zctx, endpoint, c.opts...)
	if err != nil {
		return nil, err
	}
	if c.sockets == nil {
		c.sockets = map[string]*pushSocket{}
	}
	s := &pushSocket{sock: sock, tx: zmqsock.NewSender(sock)}
	c.sockets[endpoint] = s
	return s, nil
}

func (c *pushCache) close() {
	for _, s := range c.sockets {
		s.tx.Close()
		_ = s.sock.Close()
	}
	clear(c.sockets)
}

// delayedSender sends the statuses of delayed behaviours from its own
// goroutine and sockets, so that the rank's receive loop — which sends
// immediate answers itself, saving a thread hand-off per status — never
// waits on a timer.
type delayedSender struct {
	cache pushCache
	queue chan outgoing
	stop  chan struct{}
	done  chan struct{}
}

func newDelayedSender(cache pushCache) *delayedSender {
	s := &delayedSender{cache: cache, queue: make(chan outgoing, 1024), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// enqueue hands a status over; it gives up when the rank stops.
func (s *delayedSender) enqueue(o outgoing) bool {
	select {
	case s.queue <- o:
		return true
	case <-s.stop:
		return false
	}
}

func (s *delayedSender) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(s.done)
	defer s.cache.close()
	for {
		select {
		case o := <-s.queue:
			s.cache.send(o)
		case <-s.stop:
			return
		}
	}
}

// close stops the sender; statuses not yet sent are dropped, as when a
// process dies.
func (s *delayedSender) close() {
	close(s.stop)
	<-s.done
}
