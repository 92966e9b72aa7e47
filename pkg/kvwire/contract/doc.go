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

// Package contract encodes and decodes the messages of tokenspeed's
// cache-contract wire (docs/wire.md): the 8-frame
// registration carrying the decode rank's arena and contract, the 3-frame
// pre-allocation, block manifests and their checks against the decode
// contract, and the contract-carrying bootstrap bodies.
//
// What both wires share (status messages, rank addresses, numbers, errors
// and reasons, field checks) is the parent package kvwire; this package
// never imports v1's (pkg/kvwire/v1). Whether a contract itself is valid,
// and whether a pair plans, is pkg/transferplan's to judge; this package
// checks the envelope the engine checks before reading one. Encoders are
// byte-identical to the engine; decoders take untrusted frames and return
// *kvwire.Error with a stable reason.
package contract
