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

// Package agentclient is the Go client of the receiver agent's local API
// (pkg/receiver/localapi), the way a decode engine rank talks to the agent
// beside it: one unix socket per engine rank, <socket-dir>/rank-<R>.sock.
//
// Client is the API call by call (register the engine, open, request, poll,
// wait for and clear rooms), with connection reuse, per-call timeouts and
// typed errors: *UnavailableError when the agent cannot be reached,
// *APIError when it refuses a call (with the agent's stable code).
//
// Manager and Receiver are the same rooms shaped like the reference
// engine's decode-side receiver (construct, Prefill, Poll, Clear, Failure),
// as the Python package clients/python/pdtopo_agent shapes them for Python
// engines, over the rank's event stream (POST /v1/engine/stream): Poll
// reads what the agent's events said and makes no call, and the other
// calls do not wait for the agent. Failures of a room surface through Poll
// and Failure, never as a panic or an error from Poll.
package agentclient
