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

// Package repo holds the tests that keep the repository's house rules, run
// by `go test ./...` like any other: every file a Markdown link, a doc's
// path or a Go comment names exists in the repository, and every section a
// link names; imports run one way (commands → controllers and webhooks →
// internal → pkg, with the API at the edges; docs/design.md), the test tree
// (test/) may import anything and no product code imports it but the test
// peer cmd/prefill-peer; internal/ holds only packages a binary of cmd/ or
// hack/ uses; the planner imports nothing of the wire or of Kubernetes; no
// tracked file is a compiled program, an executable that is not a #! script,
// or over 1 MiB unless listed as test data, and .gitignore names what
// `go build` writes for every main package of cmd/, hack/ and conformance/;
// no file but conformance/tokenspeed/reference.env spells the reference
// engine's commits; the docs that restate the code agree with it (the
// README's repository map and first PDPair, the condition table of
// docs/design.md); `make test` runs both linter configurations, and every
// //nolint names its linter and reason. It has no code of its own.
package repo
