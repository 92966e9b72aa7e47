package receiver

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	zmq "github.com/pebbe/zmq4"
)

const (
	// statusPollInterval is how long a receive waits before checking whether
	// the agent is stopping (ZMQ sockets cannot be closed from another
	// goroutine).
	statusPollInterval = 100 * time.Millisecond
	// maxStatusMessage caps a status message: a handful of numbers and a
	// short candidate list. Larger messages are dropped by ZMQ unread.
	maxStatusMessage = 64 << 10
)

// statusSocket is the PULL socket prefill ranks push status messages to.
type statusSocket struct {
	sock     *zmq.Socket
	endpoint string // as bound, tcp://IP:PORT
	port     int
}

// bindStatusSocket binds HOST:PORT (port 0: any free port).
func bindStatusSocket(ctx *zmq.Context, addr string) (*statusSocket, error) {
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	sock, err := ctx.NewSocket(zmq.PULL)
	if err != nil {
		return nil, err
	}
	bindPort := strconv.Itoa(port)
	if port == 0 {
		bindPort = "*"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
		if err := sock.SetIpv6(true); err != nil {
			sock.Close()
			return nil, err
		}
	}
	for _, set := range []func() error{
		func() error { return sock.SetLinger(0) },
		func() error { return sock.SetRcvtimeo(statusPollInterval) },
		func() error { return sock.SetMaxmsgsize(maxStatusMessage) },
		func() error { return sock.SetRcvhwm(pushHWM) },
		func() error { return sock.Bind("tcp://" + host + ":" + bindPort) },
	} {
		if err := set(); err != nil {
			sock.Close()
			return nil, fmt.Errorf("binding the status socket on %s: %v", addr, err)
		}
	}
	ep, err := sock.GetLastEndpoint()
	if err != nil {
		sock.Close()
		return nil, err
	}
	p, err := strconv.Atoi(ep[strings.LastIndexByte(ep, ':')+1:])
	if err != nil {
		sock.Close()
		return nil, fmt.Errorf("status socket bound to %q: no port", ep)
	}
	return &statusSocket{sock: sock, endpoint: ep, port: p}, nil
}

// serve receives messages and hands each to handle until stop is closed,
// then closes the socket (from the goroutine that used it).
func (s *statusSocket) serve(stop <-chan struct{}, handle func([][]byte)) {
	defer s.sock.Close()
	for {
		select {
		case <-stop:
			return
		default:
		}
		frames, err := s.sock.RecvMessageBytes(0)
		if err != nil {
			if e := zmq.AsErrno(err); e == zmq.Errno(syscall.EAGAIN) || e == zmq.Errno(syscall.EINTR) {
				continue
			}
			if zmq.AsErrno(err) == zmq.ETERM {
				return
			}
			time.Sleep(statusPollInterval / 10) // an unexpected error must not spin
			continue
		}
		handle(frames)
	}
}
