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

// Package pyjson is the codec of the JSON the engine's Python writes and
// reads, byte for byte as Python does: the writer of json.dumps (Object
// with its default separators, CompactWriter with separators=(",", ":"),
// both with ensure_ascii, floats as repr) and the reader of json.loads
// (Parse: the encoding guessed as Python guesses it, lone surrogates let
// through, NaN and Infinity, the last of duplicate keys, integers of any
// size), with Value holding a decoded value with exactly the distinctions
// Python makes (1 == 1.0 == True, NaN unordered, and so on).
//
// Like raft's raftpb it is the one place the format lives: pkg/kvwire
// writes the engine's bootstrap answers and registrations with it, and
// pkg/transferplan/contract decodes and re-encodes cache contracts with it.
package pyjson
