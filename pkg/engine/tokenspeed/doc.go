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

// Package tokenspeed is the rules of tokenspeed, the reference engine, as
// an engine.Engine: how a PDPair spec turns into the planner's input (buffer
// groups expanded in pointer order, the defaults, a model-aware spec's
// buffers derived from its config.json as the engine registers them), how
// both of its wires are judged and planned (v1: the buffer geometry the
// spec gives or derives; CacheContract: both roles' cache contracts), and
// how candidate layouts rank for `pdtopo advise`. Which wire a pair uses
// is this package's business: callers ask the engine.Engine and never
// test the wire.
package tokenspeed
