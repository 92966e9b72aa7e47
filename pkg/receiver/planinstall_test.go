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
	"errors"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// The race of issue 19 between a plan install and an engine registration:
// an agent serving engine ranks 0 and 1 installs a new plan set (4 KV
// buffers instead of 2) while the engine of rank 1 registers with the 2
// buffers of the old plan, in the middle of the install. The registration
// waits for the install and is checked against the new plan (refused),
// and both ranks run the new plan set. Before, the ranks were checked
// first and installed after, and a registration in between left rank 0 on
// the new plan and rank 1 on the old one.
func TestInstallPlansIsAtomicWithEngineRegistration(t *testing.T) {
	oldLayout := fixtures.MHA(2, 2, fixtures.Buffers(1, 128, 128, 128))
	newLayout := fixtures.MHA(2, 2, fixtures.Buffers(2, 128, 128, 128))
	managers := make([]*receiver.Manager, 2)
	next := make([]receiver.PlanSnapshot, 2)
	for r := range managers {
		snap := receivertest.Snapshot(t, oldLayout, r)
		managers[r], _ = receivertest.StartAgent(t, &snap, r, nil)
		next[r] = receivertest.Snapshot(t, newLayout, r)
	}
	oldHash, newHash := managers[0].PlanHash(), next[0].Hash
	if oldHash == newHash || oldHash == "" {
		t.Fatalf("plan hashes %q and %q", oldHash, newHash)
	}
	registered := make(chan error, 1)
	var duringInstall bool
	receiver.SetInstallPause(func() {
		go func() {
			registered <- managers[1].RegisterEngine(receivertest.Engine(receivertest.Snapshot(t, oldLayout, 1), 1))
		}()
		select {
		case err := <-registered:
			duringInstall = true
			registered <- err
		case <-time.After(200 * time.Millisecond): // it waits for the install, as it should
		}
	})
	t.Cleanup(func() { receiver.SetInstallPause(nil) })

	if err := receiver.InstallPlans(managers, next); err != nil {
		t.Fatalf("the install, before any engine registered: %v", err)
	}
	err := <-registered
	if duringInstall {
		t.Errorf("the engine registered in the middle of the install (%v)", err)
	}
	var rerr *receiver.Error
	if !errors.As(err, &rerr) || rerr.Code != receiver.CodeInvalidArgument {
		t.Errorf("registering the old plan's 2 buffers after the new plan (4 buffers) was installed: %v, want %s", err, receiver.CodeInvalidArgument)
	}
	for r, m := range managers {
		if h := m.PlanHash(); h != newHash {
			t.Errorf("engine rank %d runs plan %.12s, want the new %.12s (the old was %.12s)", r, h, newHash, oldHash)
		}
	}
}

// All or none: a plan one rank refuses is installed on no rank.
func TestInstallPlansAllOrNone(t *testing.T) {
	oldLayout := fixtures.MHA(2, 2, fixtures.Buffers(1, 128, 128, 128))
	newLayout := fixtures.MHA(2, 2, fixtures.Buffers(2, 128, 128, 128))
	managers := make([]*receiver.Manager, 2)
	next := make([]receiver.PlanSnapshot, 2)
	for r := range managers {
		snap := receivertest.Snapshot(t, oldLayout, r)
		managers[r], _ = receivertest.StartAgent(t, &snap, r, nil)
		next[r] = receivertest.Snapshot(t, newLayout, r)
	}
	oldHash := managers[0].PlanHash()
	if err := managers[1].RegisterEngine(receivertest.Engine(receivertest.Snapshot(t, oldLayout, 1), 1)); err != nil {
		t.Fatal(err)
	}
	err := receiver.InstallPlans(managers, next)
	if err == nil {
		t.Fatal("installed a plan whose buffers the registered engine of rank 1 does not have")
	}
	for r, m := range managers {
		if h := m.PlanHash(); h != oldHash {
			t.Errorf("engine rank %d runs %.12s after a refused install; want the old %.12s", r, h, oldHash)
		}
	}
	if err := receiver.InstallPlans(managers, []receiver.PlanSnapshot{next[0], next[0]}); err == nil {
		t.Error("installed rank 0's plan on rank 1")
	}
	if err := receiver.InstallPlans([]*receiver.Manager{managers[0], managers[0]}, next); err == nil {
		t.Error("installed two plans on one rank")
	}
}
