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

// Package webhooks holds the manager's admission handlers. The manager owns
// the webhook server (TLS, certificates, registration); each handler here is
// a small, self-contained decision over one object kind.
//
// The pod injector (podinjector*.go) adds the receiver agent to opted-in
// decode pods as a native sidecar (docs/decode-pods.md).
package webhooks
