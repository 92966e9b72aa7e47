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

package main

import (
	"runtime/debug"

	"github.com/pdtopo/pdtopo/internal/memlimit"
)

// goMemoryShare is the part of the container's memory limit the Go heap
// is held to: the rest is stacks, the runtime's own and what the heap
// returns to the OS late.
const goMemoryShare = 0.85

// Go's collector lets the heap grow to twice what is live before it runs
// (GOGC=100). The manager's live heap grows with the PDPairs and plan
// ConfigMaps it caches (117 MiB at 5,000 pairs: docs/benchmarks.md), so
// under its container limit it would be OOM-killed with half its heap
// garbage; the standby, with the same caches, would follow. A soft memory
// limit below the container's makes the collector run more often as the
// heap nears it instead.

// goMemoryLimit is the Go memory limit for a container limit of
// containerBytes (0: none), never above current (a GOMEMLIMIT set lower).
func goMemoryLimit(containerBytes, current int64) int64 {
	if containerBytes <= 0 {
		return current
	}
	return min(current, int64(float64(containerBytes)*goMemoryShare))
}

// applyMemoryLimit sets the Go memory limit from the container's, saying
// so with info.
func applyMemoryLimit(info func(msg string, keysAndValues ...any)) {
	l, err := memlimit.Read()
	if err != nil {
		info("no container memory limit read; the Go memory limit stays", "error", err.Error())
		return
	}
	current := debug.SetMemoryLimit(-1)
	if limit := goMemoryLimit(l.Bytes, current); limit != current {
		debug.SetMemoryLimit(limit)
		info("Go memory limit set below the container's", "containerLimit", l.Bytes, "from", l.File, "goMemoryLimit", limit)
	}
}
