// Package kvwire encodes and decodes the messages of the decode ↔ prefill KV
// handshake, wire protocol v1 (docs/wire.md): the ZMQ multipart registration,
// request and status messages, and the JSON bodies of the prefill bootstrap
// server's /route endpoint.
//
// Encoders are byte-identical to the reference engine (tokenspeed b5c762da):
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
