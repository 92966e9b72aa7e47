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

// statusSocket is the PULL socket prefill ranks push status messages to.
type statusSocket struct {
	sock     *zmq.Socket
	endpoint string // as bound, tcp://IP:PORT
	port     int
}

// bindStatusSocket binds HOST:PORT (port 0: any free port) with a receive
// queue of hwm messages per connection.
func bindStatusSocket(ctx *zmq.Context, addr string, hwm int, extra ...zmqsock.Option) (*statusSocket, error) {
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	opts := append([]zmqsock.Option{zmqsock.RecvTimeout(statusPollInterval), zmqsock.MaxMessageSize(MaxStatusMessage), zmqsock.RecvHWM(hwm)}, extra...)
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
