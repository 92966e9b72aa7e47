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

package receiver_test

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

func TestNewBudget(t *testing.T) {
	const mi = int64(1) << 20
	cases := []struct {
		name  string
		limit int64
		ranks int
		want  receiver.Budget
	}{
		// 480 MiB past the 32 MiB reserve: 30 MiB for each queue kind
		// (30 MiB / 64 KiB = 480 status, / 4 KiB = 7680 push messages), a
		// 420 MiB Go limit, rooms (420 - 16) / 2 MiB / 512 B = 413696
		{"512 MiB, one rank", 512 * mi, 1, receiver.Budget{MemoryLimit: 512 * mi, GoMemoryLimit: 420 * mi, MaxRoomsPerRank: 413696, StatusHWM: 480, PushHWM: 7680}},
		{"512 MiB, eight ranks", 512 * mi, 8, receiver.Budget{MemoryLimit: 512 * mi, GoMemoryLimit: 420 * mi, MaxRoomsPerRank: 51712, StatusHWM: 60, PushHWM: 960}},
		// 2^20 rooms would need more than 512 MiB of Go memory for one rank: capped there
		{"8 GiB, one rank", 8192 * mi, 1, receiver.Budget{MemoryLimit: 8192 * mi, GoMemoryLimit: 7140 * mi, MaxRoomsPerRank: 1 << 20, StatusHWM: 8160, PushHWM: 100_000}},
		// 64 MiB past the reserve: 4 MiB each queue kind, Go 56 MiB, rooms
		// 20 MiB / 64 ranks / 512 B = 640; status 4 MiB / 64 / 64 KiB = 1 → the floor
		{"96 MiB, 64 ranks", 96 * mi, 64, receiver.Budget{MemoryLimit: 96 * mi, GoMemoryLimit: 56 * mi, MaxRoomsPerRank: 640, StatusHWM: 16, PushHWM: 16}},
		{"no limit known", 0, 8, receiver.Budget{MaxRoomsPerRank: 1 << 20, StatusHWM: 100_000, PushHWM: 100_000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := receiver.NewBudget(c.limit, c.ranks)
			if err != nil || got != c.want {
				t.Fatalf("NewBudget(%d, %d) = %+v, %v; want %+v", c.limit, c.ranks, got, err, c.want)
			}
		})
	}
	if _, err := receiver.NewBudget(64*mi, 1); err == nil || err.Error() != "a memory limit of 64 MiB is below the 96 MiB the agent needs (its binary and libzmq alone take about 32 MiB)" {
		t.Fatalf("a 64 MiB limit: %v", err)
	}
}
