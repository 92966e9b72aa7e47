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

package agentclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

const streamCall = "POST /v1/engine/stream"

// streamConn is one open engine stream (docs/receiver-agent.md): the
// upgraded connection, operations written through a buffer that a
// goroutine flushes (so that the operations of one scheduler sweep leave
// in one write), events read by the Manager's reader.
type streamConn struct {
	conn  net.Conn
	r     *bufio.Reader
	hello localapi.StreamEvent

	mu      sync.Mutex
	out     []byte // operations not yet written
	failed  error  // the write that failed; later writes are dropped
	wake    chan struct{}
	closed  chan struct{}
	closing sync.Once
	// closedBy is the agent's closed line (code, message), set by the reader.
	closedBy *localapi.StreamEvent
}

// openStream dials the agent, registers info and returns the stream after
// its hello. Errors are the client's: *UnavailableError, *APIError.
func (c *Client) openStream(ctx context.Context, info receiver.EngineInfo) (*streamConn, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errDeadline)
	defer cancel()
	unavailable := func(err error) error {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", cause, err)
		}
		return &UnavailableError{Endpoint: c.endpoint, Call: streamCall, Err: err}
	}
	body, err := engineBody(info) // refused here: nothing to send
	if err != nil {
		return nil, &APIError{Call: streamCall, Code: string(receiver.CodeInvalidArgument), Message: err.Error()}
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	req := fmt.Sprintf("POST /v1/engine/stream HTTP/1.1\r\nHost: agent\r\nConnection: Upgrade\r\nUpgrade: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		localapi.StreamProtocol, len(body))
	if _, err := conn.Write(append([]byte(req), body...)); err != nil {
		conn.Close()
		return nil, unavailable(err)
	}
	r := bufio.NewReaderSize(conn, 256<<10)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, unavailable(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
		conn.Close()
		return nil, apiError(streamCall, resp.StatusCode, raw)
	}
	s := &streamConn{conn: conn, r: r, wake: make(chan struct{}, 1), closed: make(chan struct{})}
	line, err := s.readLine()
	if err == nil {
		s.hello, err = localapi.DecodeEvent(line)
	}
	if err == nil && s.hello.Ev != localapi.EvHello {
		err = fmt.Errorf("the stream's first line %q is not a hello", line)
	}
	if err != nil {
		conn.Close()
		return nil, unavailable(err)
	}
	conn.SetDeadline(time.Time{})
	go s.flush(c.timeout)
	return s, nil
}

func nonNil(p []uint64) []uint64 {
	if p == nil {
		return []uint64{}
	}
	return p
}

// send queues operation lines; they are written by flush.
func (s *streamConn) send(line []byte) {
	s.mu.Lock()
	if s.failed == nil {
		s.out = append(s.out, line...)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// flush writes queued operations until the stream closes; a write the
// agent does not take within timeout, or that fails, closes it (a line cut
// in the middle cannot be taken back).
func (s *streamConn) flush(timeout time.Duration) {
	var spare []byte
	for {
		select {
		case <-s.wake:
		case <-s.closed:
			return
		}
		s.mu.Lock()
		out := s.out
		if len(out) == 0 {
			s.mu.Unlock()
			continue
		}
		s.out = spare[:0]
		s.mu.Unlock()
		s.conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := s.conn.Write(out); err != nil {
			s.mu.Lock()
			s.failed = err
			s.mu.Unlock()
			s.close()
			return
		}
		spare = out
	}
}

// readLine reads one event line without its newline (valid until the next
// read), at most localapi.MaxStreamLine bytes.
func (s *streamConn) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	long := append([]byte(nil), line...)
	for {
		line, err = s.r.ReadSlice('\n')
		long = append(long, line...)
		if len(long) > localapi.MaxStreamLine {
			return nil, fmt.Errorf("a line longer than %d bytes is not the protocol", localapi.MaxStreamLine)
		}
		switch {
		case err == nil:
			return long[:len(long)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// why says how the stream ended, given the read that ended it.
func (s *streamConn) why(readErr error) string {
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	switch {
	case failed != nil:
		return "writing to it failed: " + failed.Error()
	case s.closedBy != nil:
		return "the agent closed it: " + s.closedBy.Code + ": " + s.closedBy.Message
	case errors.Is(readErr, io.EOF):
		return "end of file: the agent restarted or stopped"
	}
	return readErr.Error()
}

func (s *streamConn) close() {
	s.closing.Do(func() {
		close(s.closed)
		s.conn.Close()
	})
}

// Operation lines.

func openLine(room, ref int64, addr string) []byte {
	b := fmt.Appendf(nil, `{"op":"open","room":%d,"ref":%d,"bootstrapAddr":`, room, ref)
	q, _ := json.Marshal(addr)
	return append(append(b, q...), '}', '\n')
}

func requestLine(room, ref int64, req Request) []byte {
	b := fmt.Appendf(make([]byte, 0, 96+12*len(req.KVIndices)), `{"op":"request","room":%d,"ref":%d,"request":{"kvIndices":`, room, ref)
	b = appendInts(b, req.KVIndices)
	b = append(b, `,"auxIndex":`...)
	b = strconv.AppendInt(b, req.AuxIndex, 10)
	b = append(b, `,"decodePrefixLen":`...)
	b = strconv.AppendInt(b, req.DecodePrefixLen, 10)
	if req.MambaIndices != nil {
		b = append(b, `,"mambaIndices":`...)
		b = appendInts(b, req.MambaIndices)
	}
	return append(b, '}', '}', '\n')
}

func clearLine(room, ref int64) []byte {
	return fmt.Appendf(nil, `{"op":"clear","room":%d,"ref":%d}`+"\n", room, ref)
}

func appendInts(b []byte, v []int64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return append(b, ']')
}
