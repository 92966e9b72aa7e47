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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// A prefill rollout from TP 8 to TP 4 under one decode fleet (TP 4): the
// operator publishes both sets, the new one current; the agents load them
// from a projected plan directory and serve prefills of both layouts at
// once, each room with the plan of its prefill's layout (the peers execute
// every fragment byte by byte and fail rooms whose bytes land wrong). A
// TP 2 prefill, a layout the pair never had, is refused naming the
// layouts served.
func TestPrefillRolloutServesBothLayouts(t *testing.T) {
	old, cur, never := fixtures.FragmentedP8D4(), fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128)), fixtures.MHA(2, 4, fixtures.Buffers(2, 512, 256, 128))
	oldSet, curSet := fixtures.MustPlan(old), fixtures.MustPlan(cur)
	ranks := []int{0, 1, 2, 3}
	plans := loadRollout(t, ranks, curSet, oldSet)
	if len(plans.Alternates) != 1 || plans.Hash != curSet.Hash() {
		t.Fatalf("loaded %d alternate sets, hash %s; want 1 and the current set's %s", len(plans.Alternates), plans.Hash, curSet.Hash())
	}
	agents := make([]*receiver.Manager, len(ranks))
	for i, r := range ranks {
		agents[i], _ = receivertest.StartAgent(t, &plans.Ranks[i], r, nil)
		if err := agents[i].RegisterEngine(receivertest.Engine(plans.Ranks[i], r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := receiver.InstallPlanSets(agents, plans.Sets()); err != nil {
		t.Fatal(err)
	}
	peers := map[string]*prefillpeer.Peer{}
	for name, l := range map[string]planv1.Layout{"P8": old, "P8b": old, "P4": cur, "P2": never} {
		peers[name] = receivertest.StartPeer(t, l, func(c *prefillpeer.Config) { c.Logf = t.Logf })
	}
	rooms := map[string]int64{"P8": 42, "P4": 43, "P8b": 44}
	for name, room := range rooms {
		peers[name].Script(room, prefillpeer.Success(7))
	}
	// P8 and P4 bootstrap first; P8b's rooms are requested at once, while
	// they still run the current set, and move to P8's set with their request
	for i, m := range agents {
		receivertest.OpenAndRequest(t, m, peers["P8"].BootstrapAddr(), rooms["P8"], receivertest.Request)
		receivertest.OpenAndRequest(t, m, peers["P4"].BootstrapAddr(), rooms["P4"], receivertest.Request)
		if err := m.Open(peers["P8b"].BootstrapAddr(), rooms["P8b"]); err != nil {
			t.Fatal(err)
		}
		if err := m.Request(rooms["P8b"], receivertest.Request); err != nil {
			t.Fatalf("decode rank %d: %v", i, err)
		}
	}
	// later rooms to known addresses start on their address's set
	for name, room := range map[string]int64{"P8": 46, "P4": 47} {
		peers[name].Script(room, prefillpeer.Success(7))
		for _, m := range agents {
			receivertest.OpenAndRequest(t, m, peers[name].BootstrapAddr(), room, receivertest.Request)
		}
	}
	rooms2 := map[int64]string{42: "P8", 43: "P4", 44: "P8b", 46: "P8", 47: "P4"}
	for i, m := range agents {
		for room, name := range rooms2 {
			if st := receivertest.WaitStatus(t, m, room, func(p receiver.TransferPoll) bool { return p.Finished() }); st.Status != receiver.Success {
				t.Fatalf("decode rank %d, room %d to %s: %s %+v", i, room, name, st.Status, st.Failure)
			}
			// pages × buffers × decode item: every byte of the room, moved by the right ranks
			if got, want := peers[name].TransferredBytes(room, receivertest.Engine(plans.Ranks[i], i).SessionID), int64(3*4*256); got != want {
				t.Errorf("decode rank %d, room %d to %s: %d bytes written, want %d", i, room, name, got, want)
			}
		}
		if m.PlanHash() != curSet.Hash() {
			t.Errorf("decode rank %d reports plan hash %s, want the current set's %s", i, m.PlanHash(), curSet.Hash())
		}
	}
	checkFragments(t, peers["P8"], rooms["P8"], oldSet)
	checkFragments(t, peers["P4"], rooms["P4"], curSet)

	if err := agents[0].Open(peers["P2"].BootstrapAddr(), 45); err != nil {
		t.Fatal(err)
	}
	st := receivertest.WaitStatus(t, agents[0], 45, func(p receiver.TransferPoll) bool { return p.Finished() })
	if st.Status != receiver.Failed || st.Failure.Reason != receiver.ReasonLayoutMismatch {
		t.Fatalf("room to a TP 2 prefill: %s %+v, want LayoutMismatch", st.Status, st.Failure)
	}
	for _, says := range []string{"none of the 2 layouts this agent holds plans for (prefill TP 4, prefill TP 8)", "prefill_tp_size is 2"} {
		if !strings.Contains(st.Failure.Message, says) {
			t.Fatalf("refusal %q does not say %q", st.Failure.Message, says)
		}
	}
	for _, r := range peers["P2"].Ranks() {
		if c := r.Counts(); c.Registrations != 0 || c.Requests != 0 {
			t.Fatalf("the TP 2 prefill's rank %d got %+v: nothing may be sent to a layout no plan was made for", r.EngineRank, c)
		}
	}
}

// loadRollout publishes sets (current first) as the operator does,
// projects them into a directory and loads them as the agent does.
func loadRollout(t *testing.T, ranks []int, sets ...*transferplan.PlanSet) plansource.Plans {
	t.Helper()
	var in [][]planstore.Object
	for _, s := range sets {
		objs, err := planstore.Encode("pair", s)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, objs)
	}
	pub, err := planstore.EncodeSets("pair", in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	receivertest.ProjectPlans(t, dir, 1, pub.Objects)
	plans, err := plansource.Dir{Path: dir, EngineRanks: ranks}.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// checkFragments holds every request a peer's ranks received for room to
// the fragments set plans for them.
func checkFragments(t *testing.T, p *prefillpeer.Peer, room int64, set *transferplan.PlanSet) {
	t.Helper()
	for _, r := range p.Ranks() {
		for _, req := range r.Requests() {
			if req.Room != room {
				continue
			}
			d := req.Fragments
			if len(d) == 0 {
				continue // identity: whole items
			}
			plan := set.Plans[d[0].DstRank]
			i := slices.IndexFunc(plan.Targets, func(tg transferplan.PlanTarget) bool { return tg.PrefillTPRank == r.TPRank })
			if i < 0 || len(plan.Targets[i].Fragments) != len(d) {
				t.Fatalf("prefill rank %d got %d fragments for decode rank %d, not its plan's", r.TPRank, len(d), d[0].DstRank)
			}
			for j, f := range plan.Targets[i].Fragments {
				if f.SrcByteOffset != d[j].SrcByteOffset || f.DstByteOffset != d[j].DstByteOffset || f.BytesPerPage != d[j].BytesPerPage {
					t.Fatalf("prefill rank %d fragment %d: %+v, want %+v", r.TPRank, j, d[j], f)
				}
			}
		}
	}
}

// A set made for other decode buffers (a decode rollout that changed the
// model's layers beside it) does not fit the engine: whether the engine
// registered before or after the sets were installed, that set is left
// out, the current set serves, and a prefill of the other layout is
// refused by the current set alone.
func TestPlanSetThatDoesNotFitTheEngineIsLeftOut(t *testing.T) {
	cur := fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128))
	other := fixtures.MHA(8, 4, fixtures.Buffers(3, 128, 256, 128)) // 6 buffers, the engine has 4
	plans := loadRollout(t, []int{0}, fixtures.MustPlan(cur), fixtures.MustPlan(other))
	otherPeer := receivertest.StartPeer(t, other, nil)
	curPeer := receivertest.StartPeer(t, cur, nil)
	for _, registerFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("registered first %t", registerFirst), func(t *testing.T) {
			m, _ := receivertest.StartAgent(t, &plans.Ranks[0], 0, nil)
			register := func() {
				if err := m.RegisterEngine(receivertest.Engine(plans.Ranks[0], 0)); err != nil {
					t.Fatal(err)
				}
			}
			if registerFirst {
				register()
			}
			if err := receiver.InstallPlanSets([]*receiver.Manager{m}, plans.Sets()); err != nil {
				t.Fatal(err)
			}
			if !registerFirst {
				register()
			}
			curPeer.Script(1, prefillpeer.Success(3))
			receivertest.OpenAndRequest(t, m, curPeer.BootstrapAddr(), 1, receivertest.Request)
			if st := receivertest.WaitStatus(t, m, 1, func(p receiver.TransferPoll) bool { return p.Finished() }); st.Status != receiver.Success {
				t.Fatalf("room to the current layout: %s %+v", st.Status, st.Failure)
			}
			if err := m.Open(otherPeer.BootstrapAddr(), 2); err != nil {
				t.Fatal(err)
			}
			st := receivertest.WaitStatus(t, m, 2, func(p receiver.TransferPoll) bool { return p.Finished() })
			if st.Status != receiver.Failed || st.Failure.Reason != receiver.ReasonLayoutMismatch || strings.Contains(st.Failure.Message, "layouts this agent holds") {
				t.Fatalf("room to the left-out layout: %s %+v, want LayoutMismatch of the current set alone", st.Status, st.Failure)
			}
		})
	}
}

// On the cache-contract wire the set is picked by the prefill's contract:
// with the current set made for another prefill contract and the earlier
// one for the live prefill's, rooms run the earlier set and complete; an
// agent holding only the other contract's set refuses the prefill.
func TestContractRolloutPicksByContract(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	real := pair.Plan(t)
	other := *real
	other.Layout.PrefillContractSHA256 = strings.Repeat("ab", 32) // a prefill contract no peer serves
	peer := receivertest.StartContractPeer(t, pair, func(c *prefillpeer.Config) { c.Logf = t.Logf })
	peer.SetDefault(prefillpeer.Success(11))
	for _, tc := range []struct {
		name string
		sets []*transferplan.PlanSet
		want receiver.TransferPoll
	}{
		{"the earlier set is the prefill's", []*transferplan.PlanSet{&other, real}, receiver.Success},
		{"no set is the prefill's", []*transferplan.PlanSet{&other}, receiver.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rank := range receivertest.AllEngineRanks(pair) {
				var sets [][]receiver.PlanSnapshot
				for _, s := range tc.sets {
					snap, err := receiver.SnapshotFor(s, rank)
					if err != nil {
						t.Fatal(err)
					}
					sets = append(sets, []receiver.PlanSnapshot{snap})
				}
				m, _ := receivertest.StartAgent(t, &sets[0][0], rank, nil)
				if err := receiver.InstallPlanSets([]*receiver.Manager{m}, sets); err != nil {
					t.Fatal(err)
				}
				if err := m.RegisterEngine(receivertest.ContractEngine(pair, rank)); err != nil {
					t.Fatal(err)
				}
				room := int64(100 + rank)
				if err := m.Open(peer.BootstrapAddr(), room); err != nil {
					t.Fatal(err)
				}
				if err := m.Request(room, receiver.TransferRequest{Manifest: pair.Manifests[0]}); err != nil {
					t.Fatal(err)
				}
				st := receivertest.WaitStatus(t, m, room, func(p receiver.TransferPoll) bool { return p.Finished() })
				if st.Status != tc.want {
					t.Fatalf("decode rank %d: %s %+v, want %s", rank, st.Status, st.Failure, tc.want)
				}
				if tc.want == receiver.Failed && st.Failure.Reason != receiver.ReasonContractMismatch {
					t.Fatalf("decode rank %d: %+v, want ContractMismatch", rank, st.Failure)
				}
			}
		})
	}
}
