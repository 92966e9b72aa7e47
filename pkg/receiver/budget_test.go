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
		// Go heap 384 MiB; rooms 192 MiB / 512 B; status 32 MiB / 64 KiB; push 32 MiB / 4 KiB
		{"512 MiB, one rank", 512 * mi, 1, receiver.Budget{MemoryLimit: 512 * mi, GoMemoryLimit: 384 * mi, MaxRoomsPerRank: 393216, StatusHWM: 512, PushHWM: 8192}},
		{"512 MiB, eight ranks", 512 * mi, 8, receiver.Budget{MemoryLimit: 512 * mi, GoMemoryLimit: 384 * mi, MaxRoomsPerRank: 49152, StatusHWM: 64, PushHWM: 1024}},
		// 2^20 rooms would need 512 MiB of Go heap for one rank: capped there
		{"8 GiB, one rank", 8192 * mi, 1, receiver.Budget{MemoryLimit: 8192 * mi, GoMemoryLimit: 6144 * mi, MaxRoomsPerRank: 1 << 20, StatusHWM: 8192, PushHWM: 100_000}},
		// too small for the derived numbers: the floors
		{"16 MiB, 64 ranks", 16 * mi, 64, receiver.Budget{MemoryLimit: 16 * mi, GoMemoryLimit: 12 * mi, MaxRoomsPerRank: 256, StatusHWM: 16, PushHWM: 16}},
		{"no limit known", 0, 8, receiver.Budget{MaxRoomsPerRank: 1 << 20, StatusHWM: 100_000, PushHWM: 100_000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := receiver.NewBudget(c.limit, c.ranks); got != c.want {
				t.Fatalf("NewBudget(%d, %d) = %+v, want %+v", c.limit, c.ranks, got, c.want)
			}
		})
	}
}
