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

// Package receiver is the decode side of the prefill/decode KV handshake
// (docs/wire.md): for one decode rank it registers the rank's memory with
// the prefill ranks its route plan names, sends each room's request, tracks
// the status messages the prefill ranks push back, and fails rooms fast and
// with a stable reason when a peer misbehaves.
//
// It speaks both of tokenspeed's wires. What they do differently is the
// interface wire.Wire (pkg/receiver/wire), one package per wire:
// wire/v1 (buffer pointers, page indices and fragments, the layout check)
// and wire/contract (the arena and contract, block manifests, the contract
// checks and the heartbeat's re-read). A wire calls back into the agent
// only through wire.Host (wirehost.go) and reads the route view and room
// through wire.View and wire.Room. A route view carries its plan's wire;
// newWire (wire.go) is the one place one is chosen by name.
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
