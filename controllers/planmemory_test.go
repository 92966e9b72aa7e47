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

package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Two plannings whose estimates do not fit together take turns: the second
// is not admitted while the first holds its memory, and is once it is done.
func TestPlanMemoryGateBoundsBytesInFlight(t *testing.T) {
	size := transferplan.PlanSize{MaxRankPlanBytes: 40 << 20, PlanBytes: 80 << 20}
	w := planMemory(size) // 3 × 40 MiB + 1 MiB + 80 MiB / 4
	if w != 141<<20 {
		t.Fatalf("planMemory = %d, want 141 MiB", w)
	}
	g := newPlanMemoryGate(200 << 20)
	base := testutil.ToFloat64(planningBytesInFlight)
	release, err := g.admit(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(planningBytesInFlight) - base; got != float64(w) {
		t.Fatalf("%v bytes in flight, want %d", got, w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := g.admit(ctx, size); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second 141 MiB planning was admitted beside the first under 200 MiB: %v", err)
	}
	release()
	second, err := g.admit(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	second()
	// A planning estimated above the whole capacity is admitted alone.
	huge, err := g.admit(context.Background(), transferplan.PlanSize{MaxRankPlanBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	huge()
	if got := testutil.ToFloat64(planningBytesInFlight) - base; got != 0 {
		t.Fatalf("%v bytes left in flight after every release", got)
	}
	if newPlanMemoryGate(0) != nil {
		t.Fatal("a zero capacity must leave planning unbounded")
	}
}
