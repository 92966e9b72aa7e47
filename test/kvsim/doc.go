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

// Package kvsim is a byte-exact model of a KV-cache transfer, used by tests
// to judge transfer plans without trusting the planner: synthetic prefill and
// decode memories whose every byte names the token, head (unit), byte within
// the unit and buffer it belongs to, and an executor that moves bytes exactly
// as the reference prefill does (per page: page × src_page_stride_bytes +
// src_byte_offset → page × dst_page_stride_bytes + dst_byte_offset,
// bytes_per_page bytes; whole items when a target has no fragments).
//
// Where each head lives is stated here independently of the planner, from how
// engines lay out their cache: pages are token-major (token, head, head-dim),
// rank r of a side holding n heads per token holds heads [r·n, (r+1)·n), ranks
// beyond the head count share heads in consecutive groups, and a buffer whose
// items are equal on both sides with unequal totals is held whole by every rank.
//
// The package imports nothing of the project, so the planner's own tests can
// use it.
package kvsim
