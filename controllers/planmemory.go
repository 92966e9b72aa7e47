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
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// DefaultMaxPlanMemoryBytes is the default bound on the estimated memory of
// the plannings in flight: half of config/manager's 512 MiB limit, the rest
// being the informer caches, the plan cache and the Go runtime.
const DefaultMaxPlanMemoryBytes = 256 << 20

// planMemory estimates the peak memory of planning and encoding a pair of
// this size. The encoder holds one decode rank's plan at a time (its
// fragments, about as large as their JSON, the JSON itself, and a gzip
// writer's buffers) plus the compressed plans so far (plan JSON compresses
// by more than 4×, and never past the shard limit).
func planMemory(size transferplan.PlanSize) int64 {
	const gzipWriter = 1 << 20
	rank := 3*size.MaxRankPlanBytes + gzipWriter
	compressed := min(size.PlanBytes/4, int64(planstore.MaxShardConfigMaps)*planstore.ShardBudgetBytes)
	return rank + compressed
}

// planMemoryGate is a weighted semaphore over planMemory: a pair is planned
// only when its estimate fits beside those in flight, so several large pairs
// reconciled at once take turns instead of adding up. A pair estimated above
// what plannings may take is admitted alone.
//
// The contracts live reads keep (livecontracts_kept.go) count against the
// same capacity, up to a quarter of it (keptLimit); plannings are admitted
// against the rest, so that kept contracts never starve a planning.
type planMemoryGate struct {
	capacity int64
	sem      *semaphore.Weighted
	kept     atomic.Int64
}

func newPlanMemoryGate(capacity int64) *planMemoryGate {
	if capacity <= 0 {
		return nil
	}
	return &planMemoryGate{capacity: capacity, sem: semaphore.NewWeighted(capacity)}
}

func (g *planMemoryGate) admit(ctx context.Context, size transferplan.PlanSize) (func(), error) {
	w := min(planMemory(size), g.capacity-g.keptLimit())
	if err := g.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	planningBytesInFlight.Add(float64(w))
	return func() {
		planningBytesInFlight.Sub(float64(w))
		g.sem.Release(w)
	}, nil
}

// keptLimit is the most that kept live contracts may take.
func (g *planMemoryGate) keptLimit() int64 { return g.capacity / 4 }

// keep takes n bytes for kept live contracts, if they fit now.
func (g *planMemoryGate) keep(n int64) bool {
	if g.kept.Add(n) > g.keptLimit() || !g.sem.TryAcquire(n) {
		g.kept.Add(-n)
		return false
	}
	return true
}

// unkeep gives back what keep took.
func (g *planMemoryGate) unkeep(n int64) {
	g.kept.Add(-n)
	g.sem.Release(n)
}
