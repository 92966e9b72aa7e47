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

package agentclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// contractRanks serves the local API of every decode engine rank of a
// contract pair's DP group 0 (real agents, real contract prefill peer) and
// returns one stream Manager per rank, registered with the rank's arena
// and the engine's decode contract.
func contractRanks(t *testing.T, name string) (fixtures.ContractPair, *receivertest.Scenario, []*agentclient.Manager) {
	t.Helper()
	pair := fixtures.LoadContractPair(t, name)
	ranks := receivertest.AllEngineRanks(pair)
	s := receivertest.NewContractScenario(t, pair, ranks, nil, nil)
	var mgrs []*agentclient.Manager
	for i, rank := range ranks {
		sock := agentclient.SocketPath(t.TempDir(), rank)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: localapi.Handler(s.Agents[i], nil), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { srv.Close() })
		c := agentclient.New(sock, agentclient.Options{})
		t.Cleanup(c.Close)
		m, err := agentclient.NewManager(context.Background(), c, receivertest.ContractEngine(pair, rank))
		if err != nil {
			t.Fatalf("engine rank %d registering its contract: %v", rank, err)
		}
		t.Cleanup(m.Close)
		mgrs = append(mgrs, m)
	}
	return pair, s, mgrs
}

// run drives one room on every rank in the reference calling order (poll;
// prefill when Bootstrapped) until each finished, and returns the receivers.
func runRoom(t *testing.T, mgrs []*agentclient.Manager, addr string, room int64, req func(rank int) agentclient.Request) []*agentclient.Receiver {
	t.Helper()
	ctx := context.Background()
	rcs := make([]*agentclient.Receiver, len(mgrs))
	requested := make([]bool, len(mgrs))
	for i, m := range mgrs {
		rcs[i] = m.NewReceiver(ctx, addr, room)
	}
	testutil.Eventually(t, 20*time.Second, fmt.Sprintf("room %d finished on every rank", room), func() error {
		finished := 0
		for i, rc := range rcs {
			switch rc.Poll(ctx) {
			case receiver.Bootstrapped:
				if !requested[i] {
					rc.Prefill(ctx, req(i))
					requested[i] = true
				}
			case receiver.Success, receiver.Failed:
				finished++
			}
		}
		if finished < len(rcs) {
			return fmt.Errorf("%d of %d ranks finished", finished, len(rcs))
		}
		return nil
	}, poll.Every(time.Millisecond)) // polled once per loop, as a decode scheduler does
	return rcs
}

// manifestObject is a block manifest as tokenspeed holds one: an object
// whose to_wire_bytes() the client calls.
type manifestObject []byte

func (m manifestObject) WireBytes() ([]byte, error) { return m, nil }

// The Go client on the cache-contract wire: every rank registers its arena
// and contract over its stream, and rooms carrying the engine's manifests
// (as bytes, as an object with WireBytes, and pretty-printed with newlines,
// which the client compacts into the stream line) complete with the
// prefill's token.
func TestContractRoomsThroughTheStream(t *testing.T) {
	pair, s, mgrs := contractRanks(t, "gqa-p4-d2")
	s.Peer.SetDefault(prefillpeer.Success(77))
	var indented bytes.Buffer
	if err := json.Indent(&indented, pair.Manifests[0], "", "  "); err != nil {
		t.Fatal(err)
	}
	for room, req := range map[int64]func() (agentclient.Request, error){
		11: func() (agentclient.Request, error) { return agentclient.Request{Manifest: pair.Manifests[0]}, nil },
		12: func() (agentclient.Request, error) {
			return agentclient.ContractRequest(manifestObject(pair.Manifests[0]))
		},
		13: func() (agentclient.Request, error) { return agentclient.Request{Manifest: indented.Bytes()}, nil },
	} {
		r, err := req()
		if err != nil {
			t.Fatal(err)
		}
		for i, rc := range runRoom(t, mgrs, s.Peer.BootstrapAddr(), room, func(int) agentclient.Request { return r }) {
			if rc.Status() != receiver.Success || rc.BootstrapToken() != 77 {
				t.Fatalf("room %d on rank %d: %s (%v), want Success with token 77", room, i, rc.Status(), rc.Failure(context.Background()))
			}
			_ = rc.Clear(context.Background())
		}
	}
	if !strings.Contains(indented.String(), "\n") {
		t.Fatal("the indented manifest has no newline to compact")
	}
}

// A manifest that is not JSON fails its room in the client, with the code
// the agent gives a manifest it refuses; one outside the decode arena is
// refused by the agent (ManifestRefused, naming the numbers) and nothing of
// either reaches a prefill rank.
func TestContractManifestsRefused(t *testing.T) {
	pair, s, mgrs := contractRanks(t, "gqa-p4-d2")
	outside := pair.Refusal(t, "block id = page_count").Wire
	for room, manifest := range map[int64][]byte{21: []byte(`{"not json`), 22: outside} {
		for i, rc := range runRoom(t, mgrs, s.Peer.BootstrapAddr(), room, func(int) agentclient.Request { return agentclient.Request{Manifest: manifest} }) {
			fe := rc.Failure(context.Background())
			if rc.Status() != receiver.Failed || fe == nil || fe.FailureCode != string(receiver.ReasonManifestRefused) {
				t.Fatalf("room %d on rank %d: %s (%+v), want Failed with ManifestRefused", room, i, rc.Status(), fe)
			}
			if room == 21 && !strings.Contains(fe.FailureReason, "is not JSON") {
				t.Errorf("room 21: %q does not say the manifest is not JSON", fe.FailureReason)
			}
		}
	}
	s.EachRank(func(r *prefillpeer.Rank, c prefillpeer.RankCounts) string {
		if c.Requests != 0 {
			return "got pre-allocations of refused manifests"
		}
		return ""
	})
}

// A registration whose contract is not JSON is refused before anything is
// sent, naming the contract.
func TestContractRegistrationNotJSON(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	info := receivertest.ContractEngine(pair, 0)
	info.Contract = []byte("{ not json")
	c := agentclient.New(agentclient.SocketPath(t.TempDir(), 0), agentclient.Options{})
	defer c.Close()
	if _, err := agentclient.NewManager(context.Background(), c, info); err == nil || !strings.Contains(err.Error(), "cache contract (10 bytes) is not JSON") {
		t.Fatalf("registering a contract that is not JSON: %v", err)
	}
}
