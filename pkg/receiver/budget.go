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

// Floors below which a budget does not go: a container too small for them
// is too small for the agent.
const (
	minRoomsPerRank = 256
	minHWM          = 16
)

// Budget is how much of each bounded resource an agent may hold, derived
// from the memory its container is given, shared by its ranks:
//   - the Go heap at most 3/4 of the limit (GoMemoryLimit), the rest for
//     libzmq's queues (C memory, not counted by Go), thread stacks and the
//     binary;
//   - open rooms at most half of the Go heap, RoomBytes each;
//   - each rank's status receive queue (per connection, status messages of
//     at most MaxStatusMessage bytes) and push queues (per prefill rank,
//     EstimatedRequestBytes each) at most 1/16 of the limit each.
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
// container of memoryLimit bytes (0: unknown).
func NewBudget(memoryLimit int64, ranks int) Budget {
	b := Budget{MemoryLimit: memoryLimit, MaxRoomsPerRank: DefaultMaxRooms, StatusHWM: DefaultStatusHWM, PushHWM: DefaultPushHWM}
	if memoryLimit <= 0 || ranks <= 0 {
		return b
	}
	n := int64(ranks)
	b.GoMemoryLimit = memoryLimit / 4 * 3
	b.MaxRoomsPerRank = clampInt(b.GoMemoryLimit/2/n/RoomBytes, minRoomsPerRank, DefaultMaxRooms)
	b.StatusHWM = clampInt(memoryLimit/16/n/MaxStatusMessage, minHWM, DefaultStatusHWM)
	b.PushHWM = clampInt(memoryLimit/16/n/EstimatedRequestBytes, minHWM, DefaultPushHWM)
	return b
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
