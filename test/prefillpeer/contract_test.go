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

package prefillpeer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// The contract peer is held to what tokenspeed's own prefill does with the
// same bytes: the vectors under pkg/kvwire/testdata/contract record, per
// pair, each prefill rank's verdict on each decode rank's registration, and
// the prefill's verdicts on manifests.

type contractVectors struct {
	Pair    string
	Prefill struct {
		TPSize   int    `json:"tp_size"`
		DPSize   int    `json:"dp_size"`
		Contract string `json:"contract"`
	}
	Decode struct {
		TPSize   int    `json:"tp_size"`
		Contract string `json:"contract"`
	}
	Ranks []struct {
		DecodeTPRank    int      `json:"decode_tp_rank"`
		Targets         []int    `json:"targets"`
		Dummies         []int    `json:"dummies"`
		Registration    [][]byte `json:"registration"`
		PrefillVerdicts []struct {
			Accepted            bool
			IsDummy             bool  `json:"is_dummy"`
			ExpectedDecodeRanks []int `json:"expected_decode_ranks"`
			Fragments           int
		} `json:"prefill_verdicts"`
	}
	Manifests []struct {
		Wire string `json:"wire"`
	}
	ManifestRefusals []struct {
		Name    string
		Wire    string
		Verdict struct {
			Accepted  bool
			Exception string
		}
	} `json:"manifest_refusals"`
}

func loadContractVectors(t *testing.T) []contractVectors {
	t.Helper()
	files, err := filepath.Glob("../../pkg/kvwire/testdata/contract/*-*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("contract vectors: %v, %d files", err, len(files))
	}
	var out []contractVectors
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v contractVectors
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}

func contractPeer(t *testing.T, v contractVectors) *Peer {
	t.Helper()
	return startPeer(t, Config{Wire: kvwire.WireCacheContract, WorldSize: v.Prefill.TPSize * v.Prefill.DPSize,
		DPSize: v.Prefill.DPSize, Contract: []byte(v.Prefill.Contract)})
}

// Every prefill rank judges every decode rank's registration as the
// engine's _prepare_decode_registration did.
func TestContractRegistrationVerdicts(t *testing.T) {
	for _, v := range loadContractVectors(t) {
		t.Run(v.Pair, func(t *testing.T) {
			p := contractPeer(t, v)
			d := newDecodeRank(t, "unused:1")
			for _, r := range v.Ranks {
				for tp := range v.Prefill.TPSize {
					d.send(p.RankOf(0, tp).Endpoint, r.Registration)
				}
			}
			for tp := range v.Prefill.TPSize {
				rank := p.RankOf(0, tp)
				testutil.Eventually(t, 2*time.Second, "every registration judged", func() error { return errUnless(len(rank.ContractRegistrations()) == len(v.Ranks)) })
				for i, got := range rank.ContractRegistrations() {
					want := v.Ranks[i].PrefillVerdicts[tp]
					if got.Accepted != want.Accepted || got.Dummy != want.IsDummy || !slices.Equal(got.ExpectedDecodeRanks, want.ExpectedDecodeRanks) ||
						(want.Accepted && got.Fragments != want.Fragments) {
						t.Errorf("prefill rank %d, decode rank %d: accepted %v dummy %v expected %v fragments %d (%v); the engine: %+v",
							tp, i, got.Accepted, got.Dummy, got.ExpectedDecodeRanks, got.Fragments, got.Problem, want)
					}
				}
			}
		})
	}
}

// contractDecode is a decode rank of a contract pair: its status socket and
// its plan from the vectors.
type contractDecode struct {
	*decodeRank
	rank             int
	targets, dummies []int
}

func contractFleet(t *testing.T, p *Peer, v contractVectors, dpGroup int) []*contractDecode {
	t.Helper()
	var out []*contractDecode
	for _, r := range v.Ranks {
		d := &contractDecode{decodeRank: newDecodeRank(t, "127.0.0.1:"+itoa(15500+r.DecodeTPRank)), rank: r.DecodeTPRank, targets: r.Targets, dummies: r.Dummies}
		reg := d.registration(v)
		for _, tp := range append(slices.Clone(r.Targets), r.Dummies...) {
			d.send(p.RankOf(dpGroup, tp).Endpoint, reg.Frames())
		}
		out = append(out, d)
	}
	return out
}

func (d *contractDecode) registration(v contractVectors) kvcontract.Registration {
	return kvcontract.Registration{DecodeIP: "127.0.0.1", DecodeStatusPort: d.port, SessionID: d.session,
		ArenaPtr: 0x7f0000000000, Contract: []byte(v.Decode.Contract), DecodeTPSize: v.Decode.TPSize, DecodeTPRank: d.rank}
}

// preAllocate sends the room to the rank's targets (the manifest) and
// dummies (an empty frame).
func (d *contractDecode) preAllocate(p *Peer, dpGroup int, room int64, manifest []byte) {
	for _, tp := range d.targets {
		q := kvcontract.PreAllocation{Room: room, SessionID: d.session, Manifest: manifest}
		d.send(p.RankOf(dpGroup, tp).Endpoint, q.Frames())
	}
	for _, tp := range d.dummies {
		q := kvcontract.PreAllocation{Room: room, SessionID: d.session}
		d.send(p.RankOf(dpGroup, tp).Endpoint, q.Frames())
	}
}

// expect reads one status from each of the rank's targets.
func (d *contractDecode) expect(room int64, state kvwire.TransferPoll, token int64) {
	d.t.Helper()
	var from []int
	for range d.targets {
		s := d.recvStatus(5 * time.Second)
		if s.Room != room || s.State != state || (state == kvwire.Success && s.BootstrapToken != token) {
			d.t.Fatalf("decode rank %d: %+v; want %v for room %d with token %d", d.rank, s, state, room, token)
		}
		from = append(from, s.PrefillTPRank)
	}
	slices.Sort(from)
	if !slices.Equal(from, d.targets) {
		d.t.Fatalf("decode rank %d: statuses from prefill ranks %v, want %v", d.rank, from, d.targets)
	}
}

// A whole decode fleet completes every room of every pair, from exactly the
// ranks the engine planned, in every DP group; and every manifest the engine
// refuses fails its room at every target.
func TestContractFleetRooms(t *testing.T) {
	for _, v := range loadContractVectors(t) {
		t.Run(v.Pair, func(t *testing.T) {
			p := contractPeer(t, v)
			p.SetDefault(Success(42, 7, 8))
			room := int64(1 << 40)
			for g := range v.Prefill.DPSize {
				fleet := contractFleet(t, p, v, g)
				for _, m := range v.Manifests {
					room += int64(v.Prefill.DPSize)
					for _, d := range fleet {
						d.preAllocate(p, g, room, []byte(m.Wire))
					}
					for _, d := range fleet {
						d.expect(room, kvwire.Success, 42)
					}
				}
				refused := 0
				for _, r := range v.ManifestRefusals {
					if r.Verdict.Accepted || r.Verdict.Exception != "CacheContractError" {
						continue // accepted, or the engine crashes and never answers
					}
					room += int64(v.Prefill.DPSize)
					fleet[0].preAllocate(p, g, room, []byte(r.Wire))
					fleet[0].expect(room, kvwire.Failed, 0)
					refused++
				}
				if refused < 10 {
					t.Fatalf("only %d refused manifests", refused)
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
