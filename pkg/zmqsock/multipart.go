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

/*
#cgo !windows pkg-config: libzmq
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

// pdtopo_rx is one socket's receive state: a buffer that holds the kept
// frames back to back, their lengths, and the first frame's peer address.
typedef struct {
	char *buf;
	size_t cap;
	size_t used;
	size_t *lens;
	int maxframes;
	size_t maxbytes;
	int kept;      // frames whose bytes are in buf
	int nframes;   // frames the message had
	size_t nbytes; // bytes the message had
	char peer[64];
} pdtopo_rx;

// pdtopo_recv receives one whole multipart message. Frames past maxframes
// or maxbytes are received and dropped (nframes and nbytes still count
// them), so the socket is never left mid-message. It returns 0, or -1 with
// errno set when a frame could not be received (the first: EAGAIN after the
// receive timeout; the others only when the context is going away).
static int pdtopo_recv(void *sock, int flags, pdtopo_rx *rx, int wantpeer) {
	rx->used = 0;
	rx->kept = 0;
	rx->nframes = 0;
	rx->nbytes = 0;
	rx->peer[0] = 0;
	for (;;) {
		zmq_msg_t msg;
		zmq_msg_init(&msg);
		int rc;
		do {
			rc = zmq_msg_recv(&msg, sock, rx->nframes == 0 ? flags : 0);
		} while (rc < 0 && errno == EINTR); // as pebbe/zmq4 does by default
		if (rc < 0) {
			int e = errno;
			zmq_msg_close(&msg);
			errno = e;
			return -1;
		}
		if (rx->nframes == 0 && wantpeer) {
			const char *p = zmq_msg_gets(&msg, "Peer-Address");
			if (p != NULL) {
				strncpy(rx->peer, p, sizeof rx->peer - 1);
				rx->peer[sizeof rx->peer - 1] = 0;
			}
		}
		size_t len = zmq_msg_size(&msg);
		rx->nframes++;
		rx->nbytes += len;
		if (rx->kept == rx->nframes - 1 && rx->kept < rx->maxframes && len <= rx->maxbytes - rx->used) {
			if (len > rx->cap - rx->used) {
				size_t want = rx->cap * 2;
				if (want < rx->used + len) want = rx->used + len;
				if (want > rx->maxbytes) want = rx->maxbytes;
				char *grown = realloc(rx->buf, want);
				if (grown != NULL) {
					rx->buf = grown;
					rx->cap = want;
				}
			}
			if (len <= rx->cap - rx->used) {
				if (len > 0) memcpy(rx->buf + rx->used, zmq_msg_data(&msg), len);
				rx->used += len;
				rx->lens[rx->kept++] = len;
			}
		}
		int more = zmq_msg_more(&msg);
		zmq_msg_close(&msg);
		if (!more) return 0;
	}
}

// pdtopo_send sends n frames laid back to back in buf as one multipart
// message. It returns 0, or -1 with errno set. ZMQ queues a multipart
// message whole, so only the first frame can wait or be refused.
static int pdtopo_send(void *sock, const char *buf, const size_t *lens, int n, int flags) {
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		int f = flags | (i < n - 1 ? ZMQ_SNDMORE : 0);
		int rc;
		do {
			rc = zmq_send(sock, buf + off, lens[i], f);
		} while (rc < 0 && errno == EINTR);
		if (rc < 0) return -1;
		off += lens[i];
	}
	return 0;
}

static int pdtopo_socket_type(void *sock) {
	int t = -1;
	size_t size = sizeof t;
	if (zmq_getsockopt(sock, ZMQ_TYPE, &t, &size) != 0) return -1;
	return t;
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"syscall"
	"unsafe"

	zmq "github.com/pebbe/zmq4"
)

// Multipart messages cross into libzmq once per message here, where
// pebbe/zmq4 crosses six times per received frame (init, receive, data,
// copy, close, and a getsockopt for "more") and once per sent frame;
// docs/benchmarks.md measures what that cost the agent. The helpers work
// on the libzmq socket inside a *zmq.Socket; they are used by the
// goroutine (or under the lock) that owns the socket, and fall back to
// pebbe/zmq4's own calls if its Socket type ever changes shape.

// rawSocketOK says whether a *zmq.Socket starts with its libzmq socket
// pointer, as pebbe/zmq4 v1.4.0 lays it out.
var rawSocketOK = func() bool {
	f, ok := reflect.TypeFor[zmq.Socket]().FieldByName("soc")
	return ok && f.Offset == 0 && f.Type == reflect.TypeFor[unsafe.Pointer]()
}()

// rawSocket returns the libzmq socket of sock, or nil when it cannot be
// read safely: an unexpected layout, a closed socket, or a pointer libzmq
// does not recognise as a socket of sock's type.
func rawSocket(sock *zmq.Socket) unsafe.Pointer {
	if !rawSocketOK || sock == nil {
		return nil
	}
	want, err := sock.GetType() // also fails on a closed socket
	if err != nil {
		return nil
	}
	raw := *(*unsafe.Pointer)(unsafe.Pointer(sock))
	if raw == nil || C.pdtopo_socket_type(raw) != C.int(want) {
		return nil
	}
	return raw
}

// OversizeError is a message that had more frames or bytes than the
// receiver keeps. The whole message was received and dropped.
type OversizeError struct {
	Frames, Bytes       int
	MaxFrames, MaxBytes int
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("a message of %d frames and %d bytes (at most %d frames and %d bytes are read): dropped", e.Frames, e.Bytes, e.MaxFrames, e.MaxBytes)
}

// Receiver receives whole multipart messages from one socket, one call
// into libzmq per message. Close it (before or after the socket) to free
// its buffer.
type Receiver struct {
	sock     *zmq.Socket
	raw      unsafe.Pointer
	rx       *C.pdtopo_rx
	maxFrame int
	maxBytes int
}

// NewReceiver reads messages of at most maxFrames frames and maxBytes
// bytes in all from sock; larger ones are dropped with an *OversizeError.
func NewReceiver(sock *zmq.Socket, maxFrames, maxBytes int) *Receiver {
	r := &Receiver{sock: sock, raw: rawSocket(sock), maxFrame: max(maxFrames, 1), maxBytes: max(maxBytes, 0)}
	if r.raw != nil {
		r.rx = (*C.pdtopo_rx)(C.calloc(1, C.size_t(unsafe.Sizeof(C.pdtopo_rx{}))))
		r.rx.lens = (*C.size_t)(C.calloc(C.size_t(r.maxFrame), C.size_t(unsafe.Sizeof(C.size_t(0)))))
		r.rx.maxframes = C.int(r.maxFrame)
		r.rx.maxbytes = C.size_t(r.maxBytes)
	}
	return r
}

// Recv receives one message; peer asks for the connection's peer address
// (libzmq's Peer-Address property, "" when it has none). The frames share
// one freshly allocated buffer that the caller may keep. Errors are
// pebbe/zmq4's (Retry, WouldBlock and Terminated read them) or an
// *OversizeError.
func (r *Receiver) Recv(flags zmq.Flag, peer bool) (frames [][]byte, from string, err error) {
	if r.raw == nil {
		return r.recvSlow(flags, peer)
	}
	wantPeer := C.int(0)
	if peer {
		wantPeer = 1
	}
	rc, errno := C.pdtopo_recv(r.raw, C.int(flags), r.rx, wantPeer)
	if rc != 0 {
		return nil, "", zmqErrno(errno)
	}
	rx := r.rx
	if peer {
		from = C.GoString(&rx.peer[0])
	}
	if int(rx.kept) != int(rx.nframes) {
		return nil, from, &OversizeError{Frames: int(rx.nframes), Bytes: int(rx.nbytes), MaxFrames: r.maxFrame, MaxBytes: r.maxBytes}
	}
	n := int(rx.kept)
	lens := unsafe.Slice(rx.lens, n)
	data := make([]byte, int(rx.used))
	if len(data) > 0 {
		copy(data, unsafe.Slice((*byte)(unsafe.Pointer(rx.buf)), len(data)))
	}
	frames = make([][]byte, n)
	off := 0
	for i, l := range lens {
		end := off + int(l)
		frames[i] = data[off:end:end]
		off = end
	}
	return frames, from, nil
}

// recvSlow is pebbe/zmq4's own reading, with the same limits.
func (r *Receiver) recvSlow(flags zmq.Flag, peer bool) ([][]byte, string, error) {
	var (
		frames [][]byte
		meta   map[string]string
		err    error
	)
	if peer {
		frames, meta, err = r.sock.RecvMessageBytesWithMetadata(flags, "Peer-Address")
	} else {
		frames, err = r.sock.RecvMessageBytes(flags)
	}
	if err != nil {
		return nil, "", err
	}
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	if len(frames) > r.maxFrame || total > r.maxBytes {
		return nil, meta["Peer-Address"], &OversizeError{Frames: len(frames), Bytes: total, MaxFrames: r.maxFrame, MaxBytes: r.maxBytes}
	}
	return frames, meta["Peer-Address"], nil
}

// Close frees the receiver's buffer; it does not close the socket.
func (r *Receiver) Close() {
	if r.rx != nil {
		C.free(unsafe.Pointer(r.rx.buf))
		C.free(unsafe.Pointer(r.rx.lens))
		C.free(unsafe.Pointer(r.rx))
		r.rx, r.raw = nil, nil
	}
}

// Sender sends multipart messages on one socket, one call into libzmq per
// message of at most SenderMaxFrames frames and SenderMaxBytes bytes
// (larger ones go frame by frame). Close it to free its buffer.
type Sender struct {
	sock *zmq.Socket
	raw  unsafe.Pointer
	buf  *C.char // SenderMaxBytes
	lens *C.size_t
}

const (
	// SenderMaxFrames and SenderMaxBytes bound the messages a Sender
	// copies into its buffer to send in one call.
	SenderMaxFrames = 16
	SenderMaxBytes  = 16 << 10
)

// NewSender sends on sock.
func NewSender(sock *zmq.Socket) *Sender {
	s := &Sender{sock: sock, raw: rawSocket(sock)}
	if s.raw != nil {
		s.buf = (*C.char)(C.malloc(SenderMaxBytes))
		s.lens = (*C.size_t)(C.malloc(C.size_t(SenderMaxFrames) * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	}
	return s
}

// Send sends frames as one message with flags (zmq.DONTWAIT, or 0 to
// wait up to the socket's send timeout). Errors are pebbe/zmq4's.
func (s *Sender) Send(frames [][]byte, flags zmq.Flag) error {
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	if s.raw == nil || len(frames) == 0 || len(frames) > SenderMaxFrames || total > SenderMaxBytes {
		return s.sendSlow(frames, flags)
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(s.buf)), SenderMaxBytes)
	lens := unsafe.Slice(s.lens, SenderMaxFrames)
	off := 0
	for i, f := range frames {
		off += copy(buf[off:], f)
		lens[i] = C.size_t(len(f))
	}
	if rc, errno := C.pdtopo_send(s.raw, s.buf, s.lens, C.int(len(frames)), C.int(flags)); rc != 0 {
		return zmqErrno(errno)
	}
	return nil
}

func (s *Sender) sendSlow(frames [][]byte, flags zmq.Flag) error {
	for i, f := range frames {
		flag := flags
		if i < len(frames)-1 {
			flag |= zmq.SNDMORE
		}
		if _, err := s.sock.SendBytes(f, flag); err != nil {
			return err
		}
	}
	return nil
}

// Close frees the sender's buffer; it does not close the socket.
func (s *Sender) Close() {
	if s.buf != nil {
		C.free(unsafe.Pointer(s.buf))
		C.free(unsafe.Pointer(s.lens))
		s.buf, s.lens, s.raw = nil, nil, nil
	}
}

// zmqErrno turns the errno of a failed libzmq call into the error
// pebbe/zmq4 would have returned.
func zmqErrno(err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		return zmq.Errno(errno)
	}
	if err == nil {
		return zmq.Errno(syscall.EIO)
	}
	return err
}
