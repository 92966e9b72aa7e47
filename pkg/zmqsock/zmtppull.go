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

package zmqsock

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// PullConfig bounds a PullListener.
type PullConfig struct {
	// MaxFrames and MaxBytes bound one message; a connection whose message
	// passes either is closed as soon as a frame header says so.
	MaxFrames, MaxBytes int
	// MaxConns is the most connections held; more are closed at once.
	MaxConns int
	// Queue is how many messages wait for the receiver (beyond them, each
	// connection holds one message and reads nothing more until it is taken).
	Queue int
	// HandshakeTimeout bounds the greeting and READY; MessageTimeout the
	// time from a message's first frame to its last.
	HandshakeTimeout, MessageTimeout time.Duration
}

// PullMessage is a message received, or (Err set) why a connection was
// dropped for what it sent: an *OversizeError or a *ZMTPError.
type PullMessage struct {
	Frames [][]byte
	// Peer is the IP address of the connection it came by.
	Peer string
	Err  error
}

// PullListener is a ZMQ PULL socket with the NULL mechanism (no CURVE) for
// PUSH peers, in Go: each connection has a goroutine that reads one
// message at a time within the limits and hands it to Messages, which
// serves connections in turn (a channel's waiting senders go first come,
// first served), so a connection costs at most one message, whatever its
// peer sends.
type PullListener struct {
	ln     net.Listener
	cfg    PullConfig
	msgs   chan PullMessage
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// ListenPull listens on host:port (port 0: a free port, read back).
func ListenPull(host string, port int, cfg PullConfig) (*PullListener, int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, 0, err
	}
	l := &PullListener{
		ln: ln, cfg: cfg, msgs: make(chan PullMessage, max(cfg.Queue, 0)),
		slots: make(chan struct{}, max(cfg.MaxConns, 1)), closed: make(chan struct{}), conns: map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.accept()
	return l, ln.Addr().(*net.TCPAddr).Port, nil
}

// Messages delivers messages (and dropped connections' reasons).
func (l *PullListener) Messages() <-chan PullMessage { return l.msgs }

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (l *PullListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.ln.Close()
		l.mu.Lock()
		for c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return err
}

func (l *PullListener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		select {
		case l.slots <- struct{}{}:
		default:
			c.Close() // full: the peer's libzmq retries later
			continue
		}
		l.mu.Lock()
		select {
		case <-l.closed:
			l.mu.Unlock()
			c.Close()
			<-l.slots
			return
		default:
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.serve(c)
	}
}

func (l *PullListener) serve(c net.Conn) {
	defer l.wg.Done()
	defer func() {
		c.Close()
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		<-l.slots
	}()
	peer := sourceIP(c.RemoteAddr())
	r := bufio.NewReaderSize(c, 512) // frames are small; larger bodies are read past the buffer
	if err := l.handshake(c, r); err != nil {
		l.dropped(peer, err)
		return
	}
	m := &messageReader{
		r: r, maxFrames: l.cfg.MaxFrames, maxBytes: l.cfg.MaxBytes,
		onCommand: func(name string, data []byte) error { return pong(c, name, data) },
		started: func() {
			if l.cfg.MessageTimeout > 0 {
				_ = c.SetReadDeadline(time.Now().Add(l.cfg.MessageTimeout))
			}
		},
	}
	for {
		frames, err := m.next()
		if err != nil {
			l.dropped(peer, err)
			return
		}
		_ = c.SetReadDeadline(time.Time{}) // idle between messages as long as it likes
		select {
		case l.msgs <- PullMessage{Frames: frames, Peer: peer}:
		case <-l.closed:
			return
		}
	}
}

// handshake exchanges greetings and READY, and accepts only PUSH peers.
func (l *PullListener) handshake(c net.Conn, r *bufio.Reader) error {
	if l.cfg.HandshakeTimeout > 0 {
		_ = c.SetDeadline(time.Now().Add(l.cfg.HandshakeTimeout))
	}
	if _, err := c.Write(append(zmtpGreeting(), readyCommand("PULL")...)); err != nil {
		return err
	}
	g := make([]byte, zmtpGreetingLen)
	if _, err := io.ReadFull(r, g); err != nil {
		return err
	}
	if err := checkGreeting(g); err != nil {
		return err
	}
	flags, size, err := frameHeader(r)
	if err != nil {
		return err
	}
	if flags&flagCommand == 0 {
		return zmtpErrorf("a message before READY")
	}
	body, err := readCommandBody(r, size)
	if err != nil {
		return err
	}
	name, data, err := parseCommand(body)
	switch {
	case err != nil:
		return err
	case name == "ERROR":
		return zmtpErrorf("the peer sent ERROR")
	case name != "READY":
		return zmtpErrorf("command %q before READY", name)
	}
	props, err := parseProperties(data)
	if err != nil {
		return err
	}
	if t := props["Socket-Type"]; t != "PUSH" {
		return zmtpErrorf("socket type %q; a PULL socket takes PUSH peers", t)
	}
	return c.SetDeadline(time.Time{})
}

// pong answers a ZMTP 3.1 PING (libzmq's heartbeats) and ignores other
// commands between messages.
func pong(c net.Conn, name string, data []byte) error {
	if name != "PING" {
		return nil
	}
	if len(data) < 2 || len(data) > 2+16 {
		return zmtpErrorf("a PING of %d bytes", len(data))
	}
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, err := c.Write(command("PONG", data[2:]))
	_ = c.SetWriteDeadline(time.Time{})
	return err
}

// dropped reports a connection closed for what its peer sent (not one
// that merely went away, nor one closed by Close).
func (l *PullListener) dropped(peer string, err error) {
	var big *OversizeError
	var proto *ZMTPError
	if !errors.As(err, &big) && !errors.As(err, &proto) {
		return
	}
	select {
	case l.msgs <- PullMessage{Peer: peer, Err: err}:
	case <-l.closed:
	}
}

// sourceIP is the IP of a remote address.
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
