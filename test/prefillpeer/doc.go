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

// Package prefillpeer is a prefill-side peer of the KV handshake for tests,
// benchmarks and demos. It speaks wire protocol v1 (docs/wire.md) the way the
// reference engine's prefill does: a bootstrap HTTP server (PUT/GET /route,
// /health) to which every rank registers over real HTTP, and one ZMQ PULL
// endpoint per prefill rank that parses registrations and requests with
// pkg/kvwire, collects each room's requests by decode session until
// required_dst_info_num have arrived, checks the fragments it is sent
// against its own buffer layout, and then answers each non-dummy decode
// rank over ZMQ PUSH to tcp://decode_ip:decode_status_port.
//
// What a room gets is scripted: success with a bootstrap token and spec
// candidates, failure, a delay, silence, or the whole peer dying (sockets
// closed, bootstrap server gone). The bootstrap server can be told to fail,
// hang or answer garbage. Everything a rank receives, every error it finds
// and every status it sends is observable.
//
// With Config.Wire set to kvwire.WireCacheContract it speaks the engine's
// cache-contract wire instead (docs/wire.md), as the
// engine's MooncakeKVManagerPrefill does: the bootstrap server serves the
// ranks' contract (re-encoded, refusing a rank whose contract differs); a
// rank plans every registration with pkg/transferplan's contract planner and
// takes it as a target, as decode rank 0's dummy, or refuses it; it checks
// each pre-allocation's manifest against the registered decode contract,
// collects a room until every expected decode rank is in (checking the
// fan-out as the engine does), fails the room at every decode rank filed
// under it when anything is refused, and then plays the room's script. Its
// verdicts are held to the engine's own (pkg/kvwire/testdata/contract).
//
// The two wires are one interface, peerWire (wire.go), with a v1 and a
// contract implementation (wirev1.go, wirecontract.go); newPeerWire picks
// one from Config.Wire.
//
// It is not a transfer engine: no KV bytes move. It is test code, under
// test/; cmd/prefill-peer runs it as a process for `make run`'s demo and for
// engines' integration tests (the one command that imports the test tree).
package prefillpeer
