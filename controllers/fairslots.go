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
	"sync"
)

// fairSlots runs background network work (live contract reads, fleet
// probes) a bounded number at a time, shared between namespaces: PDPairs
// are written by namespace users, and one namespace pointing many pairs at
// silent addresses must not make every other namespace wait behind it.
//
// Each namespace queues its own jobs (FIFO, at most maxQueued). A free slot
// goes to the next namespace, round robin, that runs fewer than its share:
// max(1, slots/active), active being the namespaces with jobs running or
// queued, and never more than slots-reserve, so that a namespace that
// arrives while one namespace is busy finds a slot at once. A job whose
// context ended while it waited is dropped unrun.
type fairSlots struct {
	slots, reserve, maxQueued int

	mu      sync.Mutex
	running map[string]int
	queues  map[string][]slotJob
	// turn is the round-robin order of namespaces with queued jobs.
	turn    []string
	started int
}

type slotJob struct {
	ctx context.Context
	run func(context.Context)
}

func newFairSlots(slots, maxQueued int) *fairSlots {
	return &fairSlots{slots: slots, reserve: slots / 4, maxQueued: maxQueued,
		running: map[string]int{}, queues: map[string][]slotJob{}}
}

// submit queues run for namespace; it runs with ctx once a slot is free.
// False when the namespace's queue is full: the caller tries again later.
func (f *fairSlots) submit(namespace string, ctx context.Context, run func(context.Context)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queues[namespace]
	if len(q) >= f.maxQueued {
		return false
	}
	if len(q) == 0 {
		f.turn = append(f.turn, namespace)
	}
	f.queues[namespace] = append(q, slotJob{ctx: ctx, run: run})
	f.dispatch()
	return true
}

// share is how many slots one namespace may hold now.
func (f *fairSlots) share() int {
	active := len(f.queues)
	for ns, n := range f.running {
		if _, queued := f.queues[ns]; n > 0 && !queued {
			active++
		}
	}
	return max(1, min(f.slots-f.reserve, f.slots/max(1, active)))
}

// dispatch starts queued jobs while slots are free. Called with mu held.
func (f *fairSlots) dispatch() {
	for f.started < f.slots && len(f.turn) > 0 {
		share := f.share()
		picked := -1
		for i, ns := range f.turn {
			if f.running[ns] < share {
				picked = i
				break
			}
		}
		if picked < 0 {
			return // every waiting namespace holds its share
		}
		ns := f.turn[picked]
		q := f.queues[ns]
		job := q[0]
		q = q[1:]
		f.turn = append(f.turn[:picked:picked], f.turn[picked+1:]...)
		if len(q) == 0 {
			delete(f.queues, ns)
		} else {
			f.queues[ns] = q
			f.turn = append(f.turn, ns) // to the back: the others go first
		}
		if job.ctx.Err() != nil {
			continue // re-targeted or deleted while it waited
		}
		f.running[ns]++
		f.started++
		go f.runJob(ns, job)
	}
}

func (f *fairSlots) runJob(ns string, job slotJob) {
	defer func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.started--
		if f.running[ns]--; f.running[ns] <= 0 {
			delete(f.running, ns)
		}
		f.dispatch()
	}()
	job.run(job.ctx)
}

// inFlight is how many jobs of namespace run now (for tests and metrics).
func (f *fairSlots) inFlight(namespace string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[namespace]
}
