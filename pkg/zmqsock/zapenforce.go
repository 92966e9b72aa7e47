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
#include <zmq.h>

// ZMQ_ZAP_ENFORCE_DOMAIN is a draft option: zmq.h declares it only under
// ZMQ_BUILD_DRAFT_API, while the libraries Debian and Ubuntu ship (built
// with drafts) honour it. Its number is fixed by libzmq.
static int pdtopo_zap_enforce(void *sock) {
	int on = 1;
	if (zmq_setsockopt(sock, 93, &on, sizeof on) != 0) return -1;
	int got = 0;
	size_t size = sizeof got;
	if (zmq_getsockopt(sock, 93, &got, &size) != 0) return -1;
	return got == 1 ? 0 : -1;
}
*/
import "C"

import (
	"errors"

	zmq "github.com/pebbe/zmq4"
)

// Without ZMQ_ZAP_ENFORCE_DOMAIN, a CURVE server whose context has no ZAP
// handler bound (the handler stopped, or never started) accepts every
// client that knows its public key: libzmq treats a missing handler as
// "encryption without authentication". With it, such a connection fails
// its handshake, so a stopped handler fails closed.

// ErrZAPEnforceUnsupported is a libzmq that does not know
// ZMQ_ZAP_ENFORCE_DOMAIN (a build without draft options), or a socket this
// package cannot reach inside pebbe/zmq4: CURVE would fail open there, so
// the socket is not used.
var ErrZAPEnforceUnsupported = errors.New("zap: this libzmq does not support ZMQ_ZAP_ENFORCE_DOMAIN (a build with draft options is needed), so a stopped ZAP handler would let any client in; refusing to serve CURVE")

// ZAPEnforceDomain makes connections to a socket with a ZAP domain fail
// when no ZAP handler answers, instead of being accepted unauthenticated.
func ZAPEnforceDomain() Option {
	return func(s *zmq.Socket) error {
		raw := rawSocket(s)
		if raw == nil || C.pdtopo_zap_enforce(raw) != 0 {
			return ErrZAPEnforceUnsupported
		}
		return nil
	}
}
