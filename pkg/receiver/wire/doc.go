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

// Package wire is what the decode agent (pkg/receiver) asks of one of
// tokenspeed's wires (docs/wire.md), and the words the two share: the
// Wire interface each wire implements (v1: buffer pointers, page indices
// and fragments; contract: the arena and contract, block manifests), the
// Host the agent gives a wire for what it needs of the agent, and the
// engine's registration, room request, failures and refusals both speak of.
// The wires live in the sub-packages v1 and contract, which never import
// each other (test/repo); pkg/receiver chooses one by name in one place.
package wire
