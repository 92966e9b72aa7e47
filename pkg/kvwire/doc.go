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

// Package kvwire holds what the two wires of the decode ↔ prefill KV
// handshake share: wire protocol v1 (docs/wire.md, its messages in
// pkg/kvwire/v1) and tokenspeed's cache-contract wire (docs/wire.md, its
// messages in pkg/kvwire/contract). Both speak
// the same status messages and TransferPoll states, the same bootstrap
// server paths, rank addresses and bootstrap-address check; AnswerWire
// tells from a parallel-info answer which wire its server speaks. The
// numbers, field checks, Error and its Reasons here are what each wire's
// encoders and decoders are built from; the two wire packages never import
// each other.
//
// Encoders are byte-identical to the reference engine (tokenspeed at the
// commits of conformance/tokenspeed/reference.env):
// integers are ASCII decimal as Python's str(int) writes them, arrays are raw
// little-endian as numpy's tobytes() writes them on the hosts it runs on, and
// JSON bodies are what Python's json.dumps writes.
//
// Decoders take untrusted frames. They never panic; they return *Error with
// a stable Reason, the frame or field at fault, and a detail a person can act
// on. They are deliberately stricter than the reference's parsers (which
// accept, or crash on, more than the reference's own senders produce): a
// decoder accepts what a conforming sender writes, rejects the rest, and
// never accepts a message that the reference would crash on.
//
// The packages are pure: no sockets, no HTTP. They import only the standard
// library, pkg/pyjson (the JSON bodies) and the planner's vocabulary:
// pkg/transferplan here and for v1, pkg/transferplan/contract for the
// contract wire.
package kvwire
