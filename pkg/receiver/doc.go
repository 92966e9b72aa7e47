// Package receiver is the decode side of the prefill/decode KV handshake
// (wire protocol v1, docs/wire.md): for one decode rank it
// registers the rank's memory with the prefill ranks its route plan names,
// sends each room's request with that plan's fragments, tracks the status
// messages the prefill ranks push back, and fails rooms fast and with a
// stable reason when a peer misbehaves.
//
// The package is split into a pure core and a thin shell. RoomState (the
// per-room state machine), the room table with its deadline lists, the route
// view of a plan and the layout cross-check know nothing of sockets or HTTP
// and are tested on their own. Manager wires them to the ZMQ status socket,
// the PUSH sockets towards prefill ranks and the bootstrap HTTP client.
//
// It fixes the faults of the reference engine's receiver: a bootstrap fetch
// failure fails only that room with its reason; status messages from ranks a
// room does not expect are ignored and counted; every unfinished room has a
// deadline; memory is bounded by the number of open rooms.
package receiver
