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

// Package kvwire encodes and decodes the messages of the decode ↔ prefill KV
// handshake: wire protocol v1 (docs/wire.md), the ZMQ multipart registration,
// request and status messages and the JSON bodies of the prefill bootstrap
// server's /route endpoint; and tokenspeed's cache-contract wire
// (docs/wire.md), its 8-frame registration, 3-frame
// pre-allocation, block manifests and contract-carrying bootstrap bodies.
// DecodeBootstrapAnswer tells the two wires apart.
//
// Encoders are byte-identical to the reference engine (tokenspeed at the
// commits of conformance/tokenspeed/reference.env):
// integers are ASCII decimal as Python's str(int) writes them, arrays are raw
// little-endian as numpy's tobytes() writes them on the hosts it runs on, and
// fragment frames are the compact JSON Python's json.dumps writes.
//
// Decoders take untrusted frames. They never panic; they return *Error with
// a stable Reason, the frame or field at fault, and a detail a person can act
// on. They are deliberately stricter than the reference's parsers (which
// accept, or crash on, more than the reference's own senders produce): a
// decoder accepts what a conforming sender writes, rejects the rest, and
// never accepts a message that the reference would crash on.
//
// The package is pure: no sockets, no HTTP. It imports only the standard
// library and pkg/transferplan.
package kvwire
