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

// Package livecontract reads cache transfer contracts from running
// engines: a contract-era prefill's bootstrap server (its answer for
// engine_rank=-1 carries the prefill's contract as cache_layout) and a
// decode agent's probe address (the contracts its engines registered).
// The operator takes a PDPair's contracts from here when the spec leaves
// them to the live engines; `kubectl pdtopo contract` saves one to a file.
//
// Every read is bounded: one timeout per request covering the connection,
// the headers and the body; a size cap per answer, checked before the body
// is read when the server declares its length and while reading when it
// does not; no proxy, no redirect. Failures are *Error values with a
// stable Reason, the URL and the numbers, never a panic.
package livecontract
