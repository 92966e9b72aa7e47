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

package receiver

import (
	"os"
	"runtime/debug"
)

// AgentGCPercent is the GOGC the receiver agent runs with unless GOGC is
// set in its environment. Its live heap is small (the open rooms, a few
// hundred bytes each) while every message allocates; at the default 100
// the collector ran so often that it cost about a quarter of the agent's
// CPU per room in BenchmarkRoomsDirect (docs/benchmarks.md). The heap is
// bounded by the Go memory limit the agent sets from its container's
// (Budget), which makes the collector work harder only near it.
const AgentGCPercent = 400

// UseAgentGCPercent applies AgentGCPercent unless GOGC is set, and returns
// the previous setting (for benchmarks to restore).
func UseAgentGCPercent() (previous int) {
	if os.Getenv("GOGC") != "" {
		return debug.SetGCPercent(debug.SetGCPercent(-1)) // unchanged
	}
	return debug.SetGCPercent(AgentGCPercent)
}
