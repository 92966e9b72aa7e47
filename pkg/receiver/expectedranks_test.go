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
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A room completes or fails only on the word of the prefill ranks its plan
// expects. Each case has a sender that must stay silent (or that the plan
// does not know) report Success or Failed while the real targets are still
// silent: the room must stay as it was, the message must be counted under
// its own rejection reason, and the real targets must then still complete
// the room (so the room was live and the forged message would have been
// decisive had it been counted).
func TestOnlyExpectedRanksCompleteARoom(t *testing.T) {
	cases := []struct {
		name   string
		layout planv1.Layout
		room   int64 // for DP attention, room % 2 is the prefill DP group
		sender int   // the prefill TP rank the status names
		// check verifies the fixture still has the shape the case relies on.
		check  func(p transferplan.RoutePlan) error
		reason string
	}{
		{"MLA dummy target", fixtures.MLAP8D2(), 11, 1, func(p transferplan.RoutePlan) error {
			return targetIs(p, 1, true)
		}, receiver.RejectDummyTarget},
		{"idle prefill rank", fixtures.ReplicatedGQAP4D1(), 12, 1, func(p transferplan.RoutePlan) error {
			if !slices.Contains(p.IdlePrefillTPRanks, 1) {
				return fmt.Errorf("idle ranks %v do not include 1", p.IdlePrefillTPRanks)
			}
			return nil
		}, receiver.RejectIdlePrefillRank},
		{"rank outside the plan", fixtures.FragmentedP8D4(), 13, 5, func(p transferplan.RoutePlan) error {
			return notNamed(p, 5)
		}, receiver.RejectUnexpectedRank},
		// P4 DP2: TP ranks 0 and 1 in each group. Room 100 is group 0's; a
		// rank of group 1 that names its engine rank (2) names a TP rank no
		// group has.
		{"rank of another DP group (engine rank)", fixtures.DPAttention(), 100, 2, func(p transferplan.RoutePlan) error {
			return notNamed(p, 2)
		}, receiver.RejectRankOutOfRange},
		// Group 1's TP rank 1 answering room 100 (group 0): decode rank 0
		// pulls only from TP rank 0 of the room's group.
		{"rank of another DP group (TP rank)", fixtures.DPAttention(), 100, 1, func(p transferplan.RoutePlan) error {
			return notNamed(p, 1)
		}, receiver.RejectUnexpectedRank},
	}
	for _, c := range cases {
		for _, state := range []kvwire.TransferPoll{kvwire.Success, kvwire.Failed} {
			t.Run(fmt.Sprintf("%s sends %s", c.name, state), func(t *testing.T) {
				snap := receivertest.Snapshot(t, c.layout, 0)
				if err := c.check(snap.Plan); err != nil {
					t.Fatalf("fixture changed: decode rank 0's plan: %v", err)
				}
				peer := receivertest.StartPeer(t, c.layout, nil)
				peer.Script(c.room, prefillpeer.Silence()) // the real targets wait for the test
				m, reg := receivertest.StartAgent(t, &snap, 0, nil)
				if err := m.RegisterEngine(receivertest.Engine(snap, 0)); err != nil {
					t.Fatal(err)
				}
				receivertest.OpenAndRequest(t, m, peer.BootstrapAddr(), c.room, receivertest.Request)
				ep := receivertest.StatusEndpoint(t, m)

				forged := kvwire.Status{Room: c.room, State: state, PrefillTPRank: c.sender, BootstrapToken: 99}
				if err := prefillpeer.SendStatus(ep, forged); err != nil {
					t.Fatal(err)
				}
				// wait for the message to be handled, counted one way or the other
				waitHandled(t, reg, 1)
				if n := receivertest.Counter(t, reg, receivertest.MetricStatusMessagesRejected, "reason", c.reason); n != 1 {
					t.Fatalf("%s{reason=%s} = %v, want 1 (applied: %v)", receivertest.MetricStatusMessagesRejected, c.reason, n, receivertest.Counter(t, reg, receivertest.MetricStatusMessages))
				}
				st, err := m.Status(c.room)
				if err != nil {
					t.Fatal(err)
				}
				if st.Status != receiver.Bootstrapped || st.BootstrapToken != -1 || st.Failure != nil {
					t.Fatalf("after %s from prefill TP rank %d: %+v, want the room unchanged (Bootstrapped, no token)", state, c.sender, st)
				}
				for _, metric := range []string{receivertest.MetricStatusMessages, receivertest.MetricRooms} {
					if n := receivertest.Counter(t, reg, metric); n != 0 {
						t.Fatalf("%s = %v; the message must not count", metric, n)
					}
				}

				// the real targets answer: the room completes with their token
				real := realTargets(snap.Plan)
				for _, r := range real {
					if err := prefillpeer.SendStatus(ep, kvwire.Status{Room: c.room, State: kvwire.Success, PrefillTPRank: r, BootstrapToken: 7}); err != nil {
						t.Fatal(err)
					}
				}
				st = receivertest.WaitStatus(t, m, c.room, receiver.TransferPoll.Finished)
				if st.Status != receiver.Success || st.BootstrapToken != 7 {
					t.Fatalf("after the real targets %v answered: %+v, want Success with their token 7", real, st)
				}
				if n := receivertest.Counter(t, reg, receivertest.MetricStatusMessages); n != float64(len(real)) {
					t.Fatalf("%s = %v, want %d (the real targets only)", receivertest.MetricStatusMessages, n, len(real))
				}
				if n := receivertest.Counter(t, reg, receivertest.MetricStatusMessagesRejected, "reason", c.reason); n != 1 {
					t.Fatalf("%s{reason=%s} = %v, want 1", receivertest.MetricStatusMessagesRejected, c.reason, n)
				}
			})
		}
	}
}

// waitHandled waits until n status messages were applied or rejected.
func waitHandled(t *testing.T, reg *prometheus.Registry, n float64) {
	t.Helper()
	testutil.Eventually(t, receivertest.WaitTimeout, "status messages handled", func() error {
		if got := receivertest.Counter(t, reg, receivertest.MetricStatusMessagesRejected) + receivertest.Counter(t, reg, receivertest.MetricStatusMessages); got < n {
			return fmt.Errorf("%v of %v", got, n)
		}
		return nil
	})
}

// targetIs checks that rank is a target of p with the given dummy flag.
func targetIs(p transferplan.RoutePlan, rank int, dummy bool) error {
	for _, t := range p.Targets {
		if t.PrefillTPRank == rank {
			if t.IsDummy != dummy {
				return fmt.Errorf("target %d has isDummy %t", rank, t.IsDummy)
			}
			return nil
		}
	}
	return fmt.Errorf("prefill TP rank %d is not a target", rank)
}

// notNamed checks that p neither targets nor releases rank.
func notNamed(p transferplan.RoutePlan, rank int) error {
	if slices.Contains(p.IdlePrefillTPRanks, rank) || targetIs(p, rank, false) == nil || targetIs(p, rank, true) == nil {
		return fmt.Errorf("prefill TP rank %d is named by the plan", rank)
	}
	return nil
}

// realTargets are the non-dummy targets of p.
func realTargets(p transferplan.RoutePlan) []int {
	var out []int
	for _, t := range p.Targets {
		if !t.IsDummy {
			out = append(out, t.PrefillTPRank)
		}
	}
	return out
}
