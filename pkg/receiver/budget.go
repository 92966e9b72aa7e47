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

import "fmt"

// RoomBytes is the heap one open room may hold: BenchmarkOpenRoomBytes
// measures about 270 bytes (docs/benchmarks.md); the margin covers a
// waiter's channel and a room map growing (old and new buckets at once).
const RoomBytes = 512

// EstimatedRequestBytes is the size a budget assumes for one queued message
// to a prefill rank (a request of a few hundred pages and its fragment
// frames). libzmq bounds its queues in messages, not bytes.
const EstimatedRequestBytes = 4 << 10

// Without a known memory limit, the limits the agent always had apply.
const (
	DefaultPushHWM   = 100_000
	DefaultStatusHWM = 100_000
)

// What the agent holds outside the budget, and the least memory it runs in.
const (
	// ReservedBytes is memory outside the Go memory limit and the queues:
	// the binary's pages (mostly the Kubernetes client), libzmq's contexts
	// and I/O threads, thread stacks. An idle two-rank agent measures
	// 40 MiB resident, 12 MiB of it Go's (docs/benchmarks.md).
	ReservedBytes = 32 << 20
	// GoBaselineBytes is the Go memory an agent holds with no room open
	// (runtime, plans, metrics, buffers): not for rooms.
	GoBaselineBytes = 16 << 20
	// MinMemoryLimit is the smallest limit an agent accepts.
	MinMemoryLimit = 96 << 20
)

// Floors below which a budget does not go.
const (
	minRoomsPerRank = 256
	minHWM          = 16
)

// Budget is how much of each bounded resource an agent may hold, derived
// from the memory its container is given (L), shared by its N ranks:
//   - ReservedBytes for what is not Go's and not a queue;
//   - of the rest, 1/16 for libzmq's status receive queues (per connection,
//     status messages of at most MaxStatusMessage bytes) and 1/16 for its
//     queues to prefill ranks (per prefill rank, EstimatedRequestBytes a
//     message): C memory the Go limit does not see;
//   - the remainder is the Go memory limit; half of it, less
//     GoBaselineBytes, is for open rooms, RoomBytes each.
type Budget struct {
	// MemoryLimit is the container's limit in bytes; 0 when none is known,
	// and then only the defaults apply.
	MemoryLimit int64
	// GoMemoryLimit is for debug.SetMemoryLimit; 0 leaves the runtime's.
	GoMemoryLimit int64
	// MaxRoomsPerRank bounds each rank's open rooms (Config.MaxRooms).
	MaxRoomsPerRank int
	// StatusHWM and PushHWM bound each rank's libzmq queues, in messages
	// (Config.StatusHWM, Config.PushHWM).
	StatusHWM, PushHWM int
}

// NewBudget derives the budget of an agent serving ranks ranks in a
// container of memoryLimit bytes (0: unknown); a limit below
// MinMemoryLimit is refused.
func NewBudget(memoryLimit int64, ranks int) (Budget, error) {
	b := Budget{MemoryLimit: memoryLimit, MaxRoomsPerRank: DefaultMaxRooms, StatusHWM: DefaultStatusHWM, PushHWM: DefaultPushHWM}
	switch {
	case memoryLimit <= 0 || ranks <= 0:
		return b, nil
	case memoryLimit < MinMemoryLimit:
		return b, fmt.Errorf("a memory limit of %d MiB is below the %d MiB the agent needs (its binary and libzmq alone take about %d MiB)",
			memoryLimit>>20, MinMemoryLimit>>20, ReservedBytes>>20)
	}
	n, usable := int64(ranks), memoryLimit-ReservedBytes
	queues := usable / 16
	b.StatusHWM = clampInt(queues/n/MaxStatusMessage, minHWM, DefaultStatusHWM)
	b.PushHWM = clampInt(queues/n/EstimatedRequestBytes, minHWM, DefaultPushHWM)
	b.GoMemoryLimit = usable - 2*queues
	b.MaxRoomsPerRank = clampInt((b.GoMemoryLimit-GoBaselineBytes)/2/n/RoomBytes, minRoomsPerRank, DefaultMaxRooms)
	return b, nil
}

func clampInt(v int64, lo, hi int) int {
	return int(min(max(v, int64(lo)), int64(hi)))
}

// String is the budget for a log line.
func (b Budget) String() string {
	if b.MemoryLimit <= 0 {
		return fmt.Sprintf("no memory limit known: %d rooms per rank, queues of %d status and %d push messages", b.MaxRoomsPerRank, b.StatusHWM, b.PushHWM)
	}
	return fmt.Sprintf("memory limit %d MiB: Go heap %d MiB, %d rooms per rank, queues of %d status and %d push messages",
		b.MemoryLimit>>20, b.GoMemoryLimit>>20, b.MaxRoomsPerRank, b.StatusHWM, b.PushHWM)
}
