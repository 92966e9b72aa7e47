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

package localapi

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// Stream defaults.
const (
	// DefaultStreamQueueBytes bounds the events a stream holds that its
	// engine has not read yet (about 5,000 room events); past it the agent
	// drops events and sends the stream's whole table instead once the
	// engine reads again.
	DefaultStreamQueueBytes = 1 << 20
	// DefaultStreamWriteTimeout is how long an engine may leave its stream
	// unread (the agent's writes blocked) before the agent closes it.
	DefaultStreamWriteTimeout = 30 * time.Second
	// finalFlushTimeout bounds the last writes of a stream the agent ends.
	finalFlushTimeout = time.Second
)

// StreamOptions bound each engine stream.
type StreamOptions struct {
	// QueueBytes bounds the encoded events waiting for the engine to read
	// them (default DefaultStreamQueueBytes).
	QueueBytes int
	// WriteTimeout is how long a write may wait for the engine to read
	// (default DefaultStreamWriteTimeout); then the stream is closed and
	// its rooms fail with StreamStalled.
	WriteTimeout time.Duration
}

func (o StreamOptions) withDefaults() StreamOptions {
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultStreamQueueBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultStreamWriteTimeout
	}
	return o
}

// eventWriter is a stream's outgoing side: the receiver.EventSink its rooms'
// changes are pushed to (encoded at once, under the room's lock, into a
// bounded buffer), and the goroutine writing that buffer to the engine.
// Events that would overflow the buffer are dropped; the writer then sends
// a resync: the state of every open room of the stream.
type eventWriter struct {
	conn net.Conn
	opts StreamOptions

	mu       sync.Mutex
	pending  []byte // encoded events not yet written
	overflow bool   // events were dropped since the last resync
	closed   bool   // the writer stopped: lines are dropped
	err      error  // why the writer stopped before the stream ended
	drained  sync.Cond
	wake     chan struct{}
}

// newEventWriter makes a stream's writer; its connection is set before run.
func newEventWriter(opts StreamOptions) *eventWriter {
	w := &eventWriter{opts: opts, wake: make(chan struct{}, 1), pending: make([]byte, 0, 4096)}
	w.drained.L = &w.mu
	return w
}

// Push encodes a room event for the engine; it never blocks.
func (w *eventWriter) Push(ev receiver.RoomEvent) {
	w.mu.Lock()
	if w.overflow || len(w.pending) >= w.opts.QueueBytes {
		w.overflow = true
	} else {
		w.pending = AppendRoomEvent(w.pending, ev)
	}
	w.mu.Unlock()
	w.signal()
}

// line queues a line answering one of the engine's operations (a
// refusal). Unlike room events, whose state a resync restores, a refusal
// is never dropped: past twice the bound it waits for the engine to read,
// which stops the stream's reader and so, in turn, the engine's writes.
func (w *eventWriter) line(encode func([]byte) []byte) {
	w.mu.Lock()
	for len(w.pending) >= 2*w.opts.QueueBytes && !w.closed {
		w.drained.Wait()
	}
	if !w.closed {
		w.pending = encode(w.pending)
	}
	w.mu.Unlock()
	w.signal()
}

// stop ends line's waits once the writer no longer writes, recording why
// (nil when the stream ended), then closes the connection.
func (w *eventWriter) stop(err error) {
	w.mu.Lock()
	w.closed, w.err = true, err
	w.mu.Unlock()
	w.drained.Broadcast()
	w.conn.Close()
}

// failure is why the writer stopped before its stream ended (nil if it
// did not).
func (w *eventWriter) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *eventWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take hands the pending bytes to the writer, leaving spare (emptied) in
// their place, and reports whether events were dropped.
func (w *eventWriter) take(spare []byte) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out, overflow := w.pending, w.overflow
	w.pending, w.overflow = spare[:0], false
	w.drained.Broadcast()
	return out, overflow
}

// errStalled is a write the engine did not read within the write timeout.
var errStalled = errors.New("stalled")

// run writes events until the stream ends, then its last events and a
// closed line, and closes the connection; or until a write fails (the
// engine stopped reading, or its connection broke), which failure() then
// reports.
func (w *eventWriter) run(s *receiver.Stream) {
	var spare []byte
	for {
		select {
		case <-w.wake:
		case <-s.Done():
			w.finish(s)
			w.stop(nil)
			return
		}
		out, overflow := w.take(spare)
		err := w.write(out, w.opts.WriteTimeout)
		if err == nil && overflow {
			err = w.resync(s)
		}
		if err != nil {
			w.stop(err)
			return
		}
		spare = out
	}
}

// write sends b, waiting at most timeout for the engine to read it.
func (w *eventWriter) write(b []byte, timeout time.Duration) error {
	if len(b) == 0 {
		return nil
	}
	w.conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := w.conn.Write(b)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errStalled
	}
	return err
}

// resync writes the state of every open room of the stream, a shard's
// rooms at a time.
func (w *eventWriter) resync(s *receiver.Stream) error {
	var rooms []receiver.RoomEvent
	s.Snapshot(func(ev receiver.RoomEvent) { rooms = append(rooms, ev) })
	s.Resynced()
	b := AppendResync(nil, len(rooms))
	for _, ev := range rooms {
		b = AppendRoomEvent(b, ev)
		if len(b) >= w.opts.QueueBytes {
			if err := w.write(b, w.opts.WriteTimeout); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	return w.write(b, w.opts.WriteTimeout)
}

// finish writes what is pending and the stream's end, briefly: the agent
// is ending the stream and will not wait on an engine that does not read.
func (w *eventWriter) finish(s *receiver.Stream) {
	end := s.Err()
	out, _ := w.take(nil)
	out = AppendClosed(out, string(end.Reason), end.Message)
	_ = w.write(out, finalFlushTimeout)
}

// stalledMessage says why the agent closed a stream nobody read.
func (w *eventWriter) stalledMessage() string {
	return fmt.Sprintf("the engine did not read its event stream for %v (the agent's write stayed blocked); the agent closed it", w.opts.WriteTimeout)
}
