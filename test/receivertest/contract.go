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

package receivertest

import (
	"fmt"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

// ContractArena is the arena address every contract engine of the harness
// registers (the engine's vectors use it too).
const ContractArena = 0x7f3a00000000

// NewContractScenario is NewScenario for a pair of the cache-contract wire:
// a contract-era prefill peer serving pair's prefill contract, and one
// agent per engine rank whose engine registered pair's decode contract,
// running the plans the operator would publish for the pair.
func NewContractScenario(tb testing.TB, pair fixtures.ContractPair, engineRanks []int, peerMut func(*prefillpeer.Config), cfgMut func(*receiver.Config)) *Scenario {
	tb.Helper()
	s := &Scenario{TB: tb, Contract: &pair, Set: pair.Plan(tb), Req: receiver.TransferRequest{Manifest: pair.Manifests[0]}}
	s.Peer = StartContractPeer(tb, pair, func(c *prefillpeer.Config) {
		c.Logf = tb.Logf
		if peerMut != nil {
			peerMut(c)
		}
	})
	for _, rank := range engineRanks {
		s.AddAgent(rank, cfgMut)
	}
	return s
}

// StartContractPeer starts a contract-era prefill peer for pair (changed by
// mut, may be nil), closed when the test ends.
func StartContractPeer(tb testing.TB, pair fixtures.ContractPair, mut func(*prefillpeer.Config)) *prefillpeer.Peer {
	tb.Helper()
	pc := prefillpeer.Config{Wire: kvwire.WireCacheContract, WorldSize: pair.Prefill.TPSize, DPSize: pair.Prefill.DPSize, Contract: pair.PrefillContract}
	if mut != nil {
		mut(&pc)
	}
	p, err := prefillpeer.Start(pc)
	if err != nil {
		tb.Fatalf("starting the contract prefill peer: %v", err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// ContractEngine is a decode engine of pair on the contract wire: its
// session, its arena and its contract.
func ContractEngine(pair fixtures.ContractPair, engineRank int) receiver.EngineInfo {
	return receiver.EngineInfo{
		SessionID: fmt.Sprintf("127.0.0.1:%d", 17000+engineRank), ArenaPtr: ContractArena + uint64(engineRank)<<32,
		Contract: pair.DecodeContract,
	}
}

// AllEngineRanks are the engine ranks of the pair's decode DP group 0.
func AllEngineRanks(pair fixtures.ContractPair) []int {
	out := make([]int, pair.Decode.TPPerDP())
	for i := range out {
		out[i] = i
	}
	return out
}
