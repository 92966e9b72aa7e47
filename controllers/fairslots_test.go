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
	"testing"
	"time"
)

// One namespace with many jobs that never end on their own holds at most
// slots-reserve of the slots: another namespace's job starts at once, and
// once both wait, each holds at most half.
func TestFairSlotsShareBetweenNamespaces(t *testing.T) {
	f := newFairSlots(8, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := func(ctx context.Context) { <-ctx.Done() }
	for range 24 {
		if !f.submit("hostile", ctx, block) {
			t.Fatal("the queue of 64 refused the 24 first jobs")
		}
	}
	if got := f.inFlight("hostile"); got != 6 {
		t.Fatalf("one namespace alone holds %d of 8 slots, want 6 (2 kept for others)", got)
	}
	ran := make(chan struct{})
	f.submit("victim", context.Background(), func(context.Context) { close(ran) })
	select {
	case <-ran:
	case <-time.After(time.Second):
		t.Fatal("a second namespace's job did not start while the first namespace held its slots")
	}
	// A third namespace waits too: with three active, the share is 2 each.
	for range 8 {
		f.submit("third", ctx, block)
	}
	if got := f.inFlight("third"); got != 2 {
		t.Fatalf("a third namespace holds %d slots beside a hostile one, want 2", got)
	}
}

// Jobs whose context ended while they waited are dropped unrun, and a full
// queue refuses more.
func TestFairSlotsDropCancelledAndBoundQueues(t *testing.T) {
	f := newFairSlots(1, 3)
	hold, release := context.WithCancel(context.Background())
	f.submit("a", hold, func(ctx context.Context) { <-ctx.Done() })
	stale, cancelStale := context.WithCancel(context.Background())
	ran := make(chan string, 4)
	f.submit("a", stale, func(context.Context) { ran <- "stale" })
	f.submit("a", context.Background(), func(context.Context) { ran <- "fresh" })
	f.submit("a", context.Background(), func(context.Context) { ran <- "third" })
	if f.submit("a", context.Background(), func(context.Context) { ran <- "over" }) {
		t.Fatal("a queue of 3 took a fourth job")
	}
	cancelStale()
	release()
	for _, want := range []string{"fresh", "third"} {
		select {
		case got := <-ran:
			if got != want {
				t.Fatalf("ran %q, want %q (a cancelled job must not run)", got, want)
			}
		case <-time.After(time.Second):
			t.Fatalf("%q did not run", want)
		}
	}
}
