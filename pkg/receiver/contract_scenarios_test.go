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

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// The agent on the cache-contract wire, against the contract-era prefill
// peer (held to the reference engine's own verdicts), for every pair of the
// engine's vectors: contracts and manifests its own code built.

// Every decode rank of every pair completes rooms carrying the engine's
// manifests, in every prefill DP group; each prefill rank accepted exactly
// the registrations the engine's receiver would send it (one per decode
// rank that takes data from it or meets it as an idle rank) and got an
// empty manifest exactly from the decode ranks that meet it as a dummy.
func TestContractRoomsCompleteForEveryPair(t *testing.T) {
	for _, name := range fixtures.ContractPairNames(t) {
		t.Run(name, func(t *testing.T) {
			pair := fixtures.LoadContractPair(t, name)
			s := receivertest.NewContractScenario(t, pair, receivertest.AllEngineRanks(pair), nil, nil)
			s.Peer.SetDefault(prefillpeer.Success(4242))
			rooms := 0
			for g := range pair.Prefill.DPSize {
				for k, manifest := range pair.Manifests {
					room := int64(1000 + k*pair.Prefill.DPSize + g)
					s.Req = receiver.TransferRequest{Manifest: manifest}
					s.OpenAndRequest(room)
					for i := range s.Agents {
						if st := s.WaitFinished(i, room); st.Status != receiver.Success || st.BootstrapToken != 4242 {
							t.Fatalf("decode rank %d, room %d: %s (%v), want Success with token 4242", i, room, st.Status, st.Failure)
						}
					}
				}
				rooms = len(pair.Manifests)
			}
			s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
				regs, dummies := 0, 0
				for d := range pair.Targets {
					if slices.Contains(pair.Targets[d], r.TPRank) || slices.Contains(pair.Dummies[d], r.TPRank) {
						regs++
					}
					if slices.Contains(pair.Dummies[d], r.TPRank) {
						dummies++
					}
				}
				if c.Registrations != int64(regs) || c.Dummies != int64(dummies*rooms) || c.Errors != 0 {
					return fmt.Sprintf("%+v (errors %v), want %d registrations and %d dummy pre-allocations", c, r.Errors(), regs, dummies*rooms)
				}
				for _, g := range r.ContractRegistrations() {
					if !g.Accepted {
						return fmt.Sprintf("refused a registration: %v", g.Problem)
					}
				}
				return ""
			})
		})
	}
}

// Decode rank 0 of a GQA pair with 2 KV heads on 8 prefill ranks meets the
// six idle prefill ranks: each accepts its registration as the dummy
// rendezvous and gets an empty manifest per room, and none answers; the
// room completes on the sources' Success alone.
func TestContractIdleRanksGetEmptyManifests(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-replicas-p8-d2")
	if !slices.Equal(pair.Dummies[0], []int{1, 2, 3, 5, 6, 7}) {
		t.Fatalf("fixture: decode rank 0 meets %v, want [1 2 3 5 6 7]", pair.Dummies[0])
	}
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, nil)
	s.Peer.SetDefault(prefillpeer.Success(7))
	for room := int64(1); room <= 3; room++ {
		s.OpenAndRequest(room)
		for i := range s.Agents {
			if st := s.WaitFinished(i, room); st.Status != receiver.Success {
				t.Fatalf("decode rank %d, room %d: %s (%v)", i, room, st.Status, st.Failure)
			}
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		idle := slices.Contains(pair.Dummies[0], r.TPRank)
		regs := r.ContractRegistrations()
		switch {
		case len(regs) != 1 || !regs[0].Accepted:
			return fmt.Sprintf("registrations %+v, want one accepted", regs)
		case regs[0].Dummy != idle:
			return fmt.Sprintf("accepted as dummy %v; idle %v", regs[0].Dummy, idle)
		case idle && (c.Dummies != 3 || c.Requests != 3 || c.StatusesSent != 0):
			return fmt.Sprintf("%+v, want 3 empty pre-allocations and no status", c)
		case !idle && (c.Dummies != 0 || c.Requests != 3):
			return fmt.Sprintf("%+v, want 3 pre-allocations with the manifest", c)
		}
		return ""
	})
	if n := s.Counter(0, "pdtopo_receiver_status_messages_rejected_total"); n != 0 {
		t.Fatalf("%v status messages rejected: the idle ranks must stay silent", n)
	}
}

// A manifest the engine's prefill refuses (a block outside the decode
// arena, the null block, a wrong block count, a misaligned prefix, …) is
// refused by the agent before anything of the room is sent: the call fails
// with ManifestRefused naming the engine's check and the numbers, and the
// room fails with it. The manifests the engine accepts complete, except
// one with a key the engine ignores, which the agent refuses too.
func TestContractManifestRefusedBeforeSending(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-replicas-p8-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, nil)
	s.Peer.SetDefault(prefillpeer.Success(1))
	room := int64(100)
	for _, v := range pair.Refusals {
		room++
		stricter := v.Name == "unknown key" // docs/wire.md: where pdtopo differs
		t.Run(v.Name, func(t *testing.T) {
			for i, m := range s.Agents {
				if err := m.Open(s.Peer.BootstrapAddr(), room); err != nil {
					t.Fatal(err)
				}
				err := m.Request(room, receiver.TransferRequest{Manifest: v.Wire})
				if v.Accepted && !stricter {
					if err != nil {
						t.Fatalf("decode rank %d: the engine accepts this manifest, the agent refused it: %v", i, err)
					}
					continue
				}
				if receiver.CodeOf(err) != receiver.CodeManifestRefused {
					t.Fatalf("decode rank %d: %v, want %s", i, err, receiver.CodeManifestRefused)
				}
				if st := s.WaitFinished(i, room); st.Status != receiver.Failed || st.Failure.Reason != receiver.ReasonManifestRefused {
					t.Fatalf("decode rank %d: room %s (%v), want Failed with %s", i, st.Status, st.Failure, receiver.ReasonManifestRefused)
				}
			}
			if v.Accepted && !stricter {
				for i := range s.Agents {
					if st := s.WaitFinished(i, room); st.Status != receiver.Success {
						t.Fatalf("decode rank %d: %s (%v)", i, st.Status, st.Failure)
					}
				}
				return
			}
			// a valid room after it, on the same sockets, arrives after
			// anything sent before it
			barrier := room + 10000
			s.Req = receiver.TransferRequest{Manifest: pair.Manifests[0]}
			s.OpenAndRequest(barrier)
			for i := range s.Agents {
				if st := s.WaitFinished(i, barrier); st.Status != receiver.Success {
					t.Fatalf("decode rank %d, room %d: %s (%v)", i, barrier, st.Status, st.Failure)
				}
			}
			s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
				rooms := map[int64]int{}
				for _, p := range r.PreAllocations() {
					rooms[p.Room]++
				}
				if want := preAllocationsTo(pair, r.TPRank); rooms[barrier] != want {
					return fmt.Sprintf("%d pre-allocations of room %d, want %d", rooms[barrier], barrier, want)
				}
				if rooms[room] != 0 {
					return fmt.Sprintf("%d pre-allocations of the refused room %d", rooms[room], room)
				}
				return ""
			})
		})
	}
}

// The refusal of a block outside the arena names the group, the block id
// and the arena's page count.
func TestContractOutOfArenaManifestNamesTheNumbers(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0, 1}, nil, nil)
	s.Open(0, 5)
	err := s.Agents[0].Request(5, receiver.TransferRequest{Manifest: pair.Refusal(t, "block id = page_count").Wire})
	for _, part := range []string{"ManifestRefused", "ManifestBlockOutsideArena", `group "full_attention"`, "block id 64", "[1, 64)", "nothing of the room was sent"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Fatalf("refusal %v does not say %q", err, part)
		}
	}
}

// preAllocationsTo is how many pre-allocations of a room the engine's
// decode fleet sends prefill TP rank r: one from each decode rank that
// takes data from it or meets it as a dummy.
func preAllocationsTo(pair fixtures.ContractPair, r int) int {
	n := 0
	for d := range pair.Targets {
		if slices.Contains(pair.Targets[d], r) || slices.Contains(pair.Dummies[d], r) {
			n++
		}
	}
	return n
}

// A request made while its room is still Bootstrapping is kept until the
// room bootstraps: the agent keeps its own copy of the manifest, so the
// engine's buffer (a stream's line buffer, say) may be reused at once.
func TestContractQueuedManifestIsTheAgentsOwn(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	s := receivertest.NewContractScenario(t, pair, []int{0}, nil, nil)
	s.Peer.SetDefault(prefillpeer.Success(3))
	addr, release := receivertest.GatedAddress(t, s.Peer.BootstrapAddr())
	if err := s.Agents[0].Open(addr, 1); err != nil {
		t.Fatal(err)
	}
	buf := slices.Clone(pair.Manifests[0])
	if err := s.Agents[0].Request(1, receiver.TransferRequest{Manifest: buf}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Agents[0].Status(1); st.Status != receiver.Bootstrapping {
		t.Fatalf("room 1 is %s before the bootstrap server could answer", st.Status)
	}
	for i := range buf {
		buf[i] = 'x'
	}
	release()
	if st := s.WaitFinished(0, 1); st.Status != receiver.Success {
		t.Fatalf("room 1: %s (%v)", st.Status, st.Failure)
	}
}
