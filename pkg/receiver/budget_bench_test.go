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
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// BenchmarkOpenRoomBytes opens rooms and never clears them (an engine that
// forgets its DELETEs, or a flood): the heap each open room holds, which
// receiver.RoomBytes must not undercount (the memory budget divides by it).
func BenchmarkOpenRoomBytes(b *testing.B) {
	defer debug.SetGCPercent(receiver.UseAgentGCPercent())
	const rooms = 200_000
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	for range b.N {
		m, addr := benchScenario(b)
		if err := m.Open(addr, 0); err != nil { // learn the prefill's layout and addresses
			b.Fatal(err)
		}
		if err := waitLeftBootstrapping(m, 0); err != nil {
			b.Fatal(err)
		}
		before := heap()
		for id := int64(1); id <= rooms; id++ {
			if err := m.Open(addr, id); err != nil {
				b.Fatal(err)
			}
		}
		per := float64(heap()-before) / rooms
		b.ReportMetric(per, "B/open-room")
		if per > receiver.RoomBytes {
			b.Errorf("an open room holds %.0f bytes of heap, more than receiver.RoomBytes (%d) the budget assumes", per, receiver.RoomBytes)
		}
		m.Close()
	}
}
