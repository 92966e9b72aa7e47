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
	"bytes"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// A request of kind contract carries the engine's block manifest, up to
// 2 MiB, as a JSON value. Decoding it with encoding/json would validate,
// buffer and copy it several times over, and a client would have to
// validate it too (a manifest that is not JSON would make the whole line
// unreadable and end the stream). The agent needs neither: the Manager
// reads the manifest once, strictly, against the engine's contract
// (kvcontract.ValidateManifest) before it sends those same bytes. So the
// clients (pkg/receiver/agentclient, clients/python) write a contract
// request in one form,
//
//	{"op":"request","room":R,"ref":K,"request":{"kind":"contract","manifest":M}}
//	{"kind":"contract","manifest":M}                          (an HTTP body)
//
// and the agent takes M as the bytes between that head and the closing
// braces, unread. A manifest that is not JSON fails its room there
// (ManifestRefused) and nothing else; anything not in this form is left to
// encoding/json. Where M is JSON, the line reads the same either way: M is
// then the whole value of "manifest".
var (
	contractLineHead = []byte(`{"op":"request","room":`)
	contractLineRef  = []byte(`,"ref":`)
	contractBodyHead = []byte(`{"kind":"contract","manifest":`)
)

// scanContractLine reads a stream line of that form; op.Request and the
// manifest alias line.
func scanContractLine(line []byte) (op StreamOp, req *receiver.TransferRequest, ok bool) {
	if !bytes.HasPrefix(line, contractLineHead) {
		return op, nil, false
	}
	s := scanner{b: line, i: len(contractLineHead)}
	room, ok := s.int()
	if !ok || room < 0 || !bytes.HasPrefix(line[s.i:], contractLineRef) {
		return op, nil, false
	}
	s.i += len(contractLineRef)
	ref, ok := s.int()
	if !ok || !bytes.HasPrefix(line[s.i:], []byte(`,"request":`)) {
		return op, nil, false
	}
	body := line[s.i+len(`,"request":`):]
	if len(body) < 1 || body[len(body)-1] != '}' {
		return op, nil, false
	}
	body = body[:len(body)-1]
	r, ok := scanContractBody(body)
	if !ok {
		return op, nil, false
	}
	return StreamOp{Op: OpRequest, Room: &room, Ref: ref, Request: body}, &r, true
}

// scanContractBody reads a request body of that form; the manifest aliases
// raw. Whitespace may follow the body.
func scanContractBody(raw []byte) (receiver.TransferRequest, bool) {
	raw = bytes.TrimRight(raw, " \t\r\n")
	if !bytes.HasPrefix(raw, contractBodyHead) || raw[len(raw)-1] != '}' {
		return receiver.TransferRequest{}, false
	}
	m := raw[len(contractBodyHead) : len(raw)-1]
	if len(m) == 0 || len(m) > kvcontract.MaxManifestBytes {
		return receiver.TransferRequest{}, false // encoding/json describes it
	}
	return receiver.TransferRequest{Manifest: m}, true
}
