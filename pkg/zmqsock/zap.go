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
	"errors"
	"fmt"
	"sync"
	"time"

	zmq "github.com/pebbe/zmq4"
)

// ZMQ CURVE encrypts a connection and proves that the server holds the
// secret key of the public key the client was given; which clients a
// server accepts is decided by a ZAP handler (ZeroMQ RFC 27): libzmq asks
// it, over inproc://zeromq.zap.01 in the socket's own context, for every
// new connection to a socket with a ZAP domain. pebbe/zmq4's handler
// serves only its default context, and each of the agent's ranks has its
// own, so this package has its own, one per context.

// zapEndpoint is where libzmq sends a context's ZAP requests.
const zapEndpoint = "inproc://zeromq.zap.01"

// ZAPRequest is one authentication request (RFC 27).
type ZAPRequest struct {
	RequestID []byte
	Domain    string
	// Address is the peer's IP address.
	Address   string
	Identity  []byte
	Mechanism string
	// Credentials are the mechanism's: for CURVE, the client's 32-byte
	// public key.
	Credentials [][]byte
}

// ZAPVersion is the only protocol version RFC 27 defines.
const ZAPVersion = "1.0"

// DecodeZAPRequest reads a request's frames: version, request id, domain,
// address, identity, mechanism, then the credentials.
func DecodeZAPRequest(frames [][]byte) (ZAPRequest, error) {
	if len(frames) < 6 {
		return ZAPRequest{}, fmt.Errorf("zap: a request has at least 6 frames, got %d", len(frames))
	}
	if string(frames[0]) != ZAPVersion {
		return ZAPRequest{}, fmt.Errorf("zap: version %q, want %q", frames[0], ZAPVersion)
	}
	mech := string(frames[5])
	switch mech {
	case "NULL", "PLAIN", "CURVE", "GSSAPI":
	default:
		return ZAPRequest{}, fmt.Errorf("zap: unknown mechanism %q", frames[5])
	}
	r := ZAPRequest{RequestID: frames[1], Domain: string(frames[2]), Address: string(frames[3]), Identity: frames[4], Mechanism: mech, Credentials: frames[6:]}
	if mech == "CURVE" && (len(r.Credentials) != 1 || len(r.Credentials[0]) != 32) {
		return ZAPRequest{}, fmt.Errorf("zap: a CURVE request carries one 32-byte public key, got %d frames", len(r.Credentials))
	}
	return r, nil
}

// CurveClientKey is the Z85 text of a CURVE request's client public key
// ("" for other mechanisms).
func (r ZAPRequest) CurveClientKey() string {
	if r.Mechanism != "CURVE" || len(r.Credentials) != 1 {
		return ""
	}
	return zmq.Z85encode(string(r.Credentials[0]))
}

// reply is the answer to a request: 200 or 400 with a status text.
func (r ZAPRequest) reply(ok bool, text string) [][]byte {
	code := "400"
	if ok {
		code = "200"
	}
	return [][]byte{[]byte(ZAPVersion), r.RequestID, []byte(code), []byte(text), nil, nil}
}

// ZAPHandler answers a context's authentication requests until Close.
type ZAPHandler struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error // why serve returned, written before done closes
}

// zapPoll is how often the handler checks whether it should stop.
const zapPoll = 100 * time.Millisecond

// StartZAP binds zctx's ZAP endpoint and answers each request with
// allow's verdict (its text goes back to libzmq, which logs it). Start it
// before binding the sockets it guards.
func StartZAP(zctx *zmq.Context, allow func(ZAPRequest) (bool, string)) (*ZAPHandler, error) {
	sock, err := zctx.NewSocket(zmq.REP)
	if err != nil {
		return nil, err
	}
	for _, set := range []Option{Linger(0), RecvTimeout(zapPoll)} {
		if err := set(sock); err != nil {
			sock.Close()
			return nil, err
		}
	}
	if err := sock.Bind(zapEndpoint); err != nil {
		sock.Close()
		return nil, fmt.Errorf("zap: binding %s: %w", zapEndpoint, err)
	}
	h := &ZAPHandler{stop: make(chan struct{}), done: make(chan struct{})}
	go h.serve(sock, allow)
	return h, nil
}

func (h *ZAPHandler) serve(sock *zmq.Socket, allow func(ZAPRequest) (bool, string)) {
	defer close(h.done)
	defer sock.Close()
	for {
		select {
		case <-h.stop:
			h.err = ErrZAPClosed
			return
		default:
		}
		frames, err := sock.RecvMessageBytes(0)
		switch {
		case err != nil && Retry(err):
			continue
		case err != nil:
			h.err = fmt.Errorf("zap: the handler stopped receiving: %w", err) // the context is terminating
			return
		}
		req, err := DecodeZAPRequest(frames)
		var answer [][]byte
		if err != nil {
			// REP must answer something; an id-less reply is ignored by libzmq
			req = ZAPRequest{RequestID: requestID(frames)}
			answer = req.reply(false, err.Error())
		} else {
			answer = req.reply(allow(req))
		}
		if _, err := sock.SendMessage(answer); err != nil && errors.Is(err, zmq.ETERM) {
			h.err = fmt.Errorf("zap: the handler stopped answering: %w", err)
			return
		}
	}
}

func requestID(frames [][]byte) []byte {
	if len(frames) > 1 {
		return frames[1]
	}
	return nil
}

// ErrZAPClosed is why a handler stopped when Close stopped it.
var ErrZAPClosed = errors.New("zap: the handler was closed")

// Done is closed when the handler has stopped answering, for whatever
// reason; Err then says why. Sockets made with ZAPEnforceDomain refuse new
// connections from then on, so whoever runs them should stop too.
func (h *ZAPHandler) Done() <-chan struct{} { return h.done }

// Err is why the handler stopped (ErrZAPClosed after Close), nil while it
// runs.
func (h *ZAPHandler) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Close stops the handler (before the context terminates).
func (h *ZAPHandler) Close() {
	h.once.Do(func() { close(h.stop) })
	<-h.done
}

// CurveServer makes a socket a CURVE server with secretKey (Z85) that
// asks the context's ZAP handler, under domain, which clients to accept,
// and refuses every client while no handler answers (ZAPEnforceDomain).
func CurveServer(secretKey, domain string) Option {
	return func(s *zmq.Socket) error {
		if err := s.SetCurveServer(1); err != nil {
			return err
		}
		if err := s.SetCurveSecretkey(secretKey); err != nil {
			return err
		}
		if err := s.SetZapDomain(domain); err != nil {
			return err
		}
		return ZAPEnforceDomain()(s)
	}
}

// CurveClient makes a socket a CURVE client of the server whose public key
// is serverKey, with its own key pair (all Z85).
func CurveClient(serverKey, publicKey, secretKey string) Option {
	return func(s *zmq.Socket) error {
		if err := s.SetCurveServerkey(serverKey); err != nil {
			return err
		}
		if err := s.SetCurvePublickey(publicKey); err != nil {
			return err
		}
		return s.SetCurveSecretkey(secretKey)
	}
}
