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

// Package v1 encodes and decodes the messages of wire protocol v1,
// tokenspeed's fragment wire (docs/wire.md): the 8-frame
// registration with one pointer per KV and state buffer, the 12- or
// 14-frame request with its page indices and fragment frames, and the v1
// bootstrap bodies (a rank's PUT /route with its item lengths, the
// parallel-info answer).
//
// What both wires share (status messages, rank addresses, numbers, errors
// and reasons, field checks) is the parent package kvwire; this package
// never imports the cache-contract wire's (pkg/kvwire/contract). Encoders
// are byte-identical to the reference; decoders take untrusted frames and
// return *kvwire.Error with a stable reason.
package v1
