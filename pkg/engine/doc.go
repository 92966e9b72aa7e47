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

// Package engine is the seam between pdtopo and the serving engines whose
// pairs it judges. An Engine holds one engine's rules: how a PDPair's
// buffers are derived from its model, whether a layout pair is compatible
// (and, when it is not, the typed reason and the fix), which prefill ranks
// each decode rank pulls from, and how candidate layouts rank for
// `pdtopo advise`. The operator, the webhooks and the CLI ask the Engine a
// pair's spec chooses and never name an engine or a wire.
//
// Each engine is a package of its own beside this one (tokenspeed, the
// reference engine, is pkg/engine/tokenspeed); pkg/engine/engines lists them
// in one place. This package holds only the interface and the values every
// engine shares: it imports no engine.
package engine
