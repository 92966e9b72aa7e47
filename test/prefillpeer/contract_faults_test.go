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
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/test/testutil"
)

func pairVectors(t *testing.T, name string) contractVectors {
	t.Helper()
	for _, v := range loadContractVectors(t) {
		if v.Pair == name {
			return v
		}
	}
	t.Fatalf("no vectors for %s", name)
	return contractVectors{}
}

func TestContractBootstrap(t *testing.T) {
	v := pairVectors(t, "gqa-p4-d2")
	// The ranks register the contract with whitespace the engine's server
	// drops: it serves its own re-encoding.
	spaced := strings.Replace(v.Prefill.Contract, `{"plan":`, `{ "plan" : `, 1)
	p := startPeer(t, Config{Wire: kvwire.WireCacheContract, WorldSize: 4, Contract: []byte(spaced)})
	code, body, _ := get(t, "http://"+p.BootstrapAddr()+kvwire.RoutePath+"?"+kvwire.ParallelInfoQuery)
	wire, _ := kvwire.AnswerWire([]byte(body))
	ans, err := kvcontract.DecodeParallelInfo([]byte(body))
	if code != http.StatusOK || err != nil || wire != kvwire.WireCacheContract || string(ans.CacheLayout) != v.Prefill.Contract || ans.PrefillTPSize != 4 {
		t.Fatalf("%d %.200s: %+v, %v", code, body, ans, err)
	}
	// A rank with another contract is refused, as the engine's server does.
	other := kvcontract.RankRegistration{Role: kvwire.RolePrefill, WorldSize: 4, DPSize: 1, RankIP: "127.0.0.1", RankPort: 1, EngineRank: 3,
		CacheLayout: []byte(strings.Replace(v.Prefill.Contract, `"num_lcm_blocks":47`, `"num_lcm_blocks":46`, 1))}
	if code, body, _ := do(t, http.MethodPut, "http://"+p.BootstrapAddr()+kvwire.RoutePath, bytes.NewReader(other.MarshalPython())); code != http.StatusInternalServerError || !strings.Contains(body, "incompatible layouts") {
		t.Fatalf("a second contract: %d %s", code, body)
	}
	if _, body, _ := get(t, "http://"+p.BootstrapAddr()+kvwire.RoutePath+"?"+kvwire.RankAddressQuery(3, 0)); !strings.Contains(body, `"rank_port": `) || strings.Contains(body, `"rank_port": 1}`) {
		t.Fatalf("the refused rank was filed: %s", body)
	}
	p.SetBootstrapFault(BootstrapFault{ParallelInfo: FaultOtherWire})
	_, body, _ = get(t, "http://"+p.BootstrapAddr()+kvwire.RoutePath+"?"+kvwire.ParallelInfoQuery)
	if wire, err := kvwire.AnswerWire([]byte(body)); err != nil || wire != kvwire.WireV1 {
		t.Fatalf("other wire: %s: %q, %v", body, wire, err)
	}
	if _, err := kvv1.DecodeParallelInfo([]byte(body)); err != nil {
		t.Fatalf("other wire: %s: %v", body, err)
	}
}

func TestContractConfigRefused(t *testing.T) {
	v := pairVectors(t, "gqa-p4-d2")
	for _, cfg := range []Config{
		{Wire: kvwire.WireCacheContract, WorldSize: 2},
		{Wire: kvwire.WireCacheContract, WorldSize: 2, Contract: []byte(`{"plan":{}}`)},
		{Wire: kvwire.WireCacheContract, WorldSize: 2, Contract: []byte(v.Prefill.Contract), RankContracts: map[int][]byte{2: nil}},
		{Wire: "V2", WorldSize: 2},
	} {
		if p, err := Start(cfg); err == nil {
			_ = p.Close()
			t.Errorf("%+v: started", cfg)
		}
	}
}

// The engine's refusals, each failing the room at the decode rank that
// caused it: the wrong prefill rank, a duplicate, a dummy frame to a
// target, a conflicting registration; and a failed room staying failed.
func TestContractRefusals(t *testing.T) {
	v := pairVectors(t, "gqa-p2-d4") // decode ranks 0 and 1 ← prefill 0, 2 and 3 ← prefill 1
	manifest := []byte(v.Manifests[0].Wire)
	p := contractPeer(t, v)
	fleet := contractFleet(t, p, v, 0)
	d0, d1, d2 := fleet[0], fleet[1], fleet[2]
	failedFrom := func(d *contractDecode, room int64, rank int) {
		t.Helper()
		if s := d.recvStatus(5 * time.Second); s.State != kvwire.Failed || s.Room != room || s.PrefillTPRank != rank {
			t.Fatalf("decode rank %d: %+v; want Failed for room %d from prefill rank %d", d.rank, s, room, rank)
		}
	}

	t.Run("registered at the wrong prefill rank", func(t *testing.T) {
		wrong := &contractDecode{decodeRank: newDecodeRank(t, "127.0.0.1:16001"), rank: 0, targets: []int{1}}
		reg := wrong.registration(v)
		wrong.send(p.RankOf(0, 1).Endpoint, reg.Frames())
		testutil.Eventually(t, 2*time.Second, "the refusal", func() error {
			return errUnless(hasError(p.RankOf(0, 1), ReasonRegistrationRefused, "wrong prefill TP rank"))
		})
		wrong.preAllocate(p, 0, 11, manifest)
		wrong.expect(11, kvwire.Failed, 0)
	})
	t.Run("a duplicate pre-allocation", func(t *testing.T) {
		q := kvcontract.PreAllocation{Room: 12, SessionID: d0.session, Manifest: manifest}
		d0.send(p.RankOf(0, 0).Endpoint, q.Frames())
		d0.send(p.RankOf(0, 0).Endpoint, q.Frames())
		failedFrom(d0, 12, 0) // the filed one
		failedFrom(d0, 12, 0) // the duplicate
		testutil.Eventually(t, 2*time.Second, "the refusal", func() error {
			return errUnless(hasError(p.RankOf(0, 0), ReasonPreAllocationRefused, "a second pre-allocation"))
		})
		// The room stays failed: decode rank 1's pre-allocation is failed at once.
		d1.preAllocate(p, 0, 12, manifest)
		failedFrom(d1, 12, 0)
	})
	t.Run("an empty manifest to a target", func(t *testing.T) {
		q := kvcontract.PreAllocation{Room: 13, SessionID: d2.session}
		d2.send(p.RankOf(0, 1).Endpoint, q.Frames())
		failedFrom(d2, 13, 1)
		testutil.Eventually(t, 2*time.Second, "the refusal", func() error {
			return errUnless(hasError(p.RankOf(0, 1), ReasonPreAllocationRefused, "a dummy pre-allocation"))
		})
	})
	t.Run("a conflicting registration fails the session's open rooms", func(t *testing.T) {
		d2.preAllocate(p, 0, 14, manifest) // prefill rank 1 waits for decode rank 3
		testutil.Eventually(t, 2*time.Second, "the pre-allocation", func() error { return errUnless(sawPreAllocation(p.RankOf(0, 1), 14, d2.session)) })
		reg := d2.registration(v)
		reg.ArenaPtr++
		d2.send(p.RankOf(0, 1).Endpoint, reg.Frames())
		failedFrom(d2, 14, 1)
		d2.preAllocate(p, 0, 15, manifest)
		failedFrom(d2, 15, 1)
	})
	t.Run("a room mixing decode TP sizes", func(t *testing.T) {
		// Another decode instance, TP 2 (whose rank 0 prefill rank 0 serves
		// alone), joins a room decode rank 0 of the TP-4 one opened.
		other := pairVectors(t, "gqa-p4-d2")
		x := &contractDecode{decodeRank: newDecodeRank(t, "127.0.0.1:16003"), rank: 0, targets: []int{0}}
		reg := kvcontract.Registration{DecodeIP: "127.0.0.1", DecodeStatusPort: x.port, SessionID: x.session, ArenaPtr: 1,
			Contract: []byte(other.Decode.Contract), DecodeTPSize: 2, DecodeTPRank: 0}
		x.send(p.RankOf(0, 0).Endpoint, reg.Frames())
		q := kvcontract.PreAllocation{Room: 18, SessionID: d0.session, Manifest: manifest}
		d0.send(p.RankOf(0, 0).Endpoint, q.Frames())
		testutil.Eventually(t, 2*time.Second, "decode rank 0's pre-allocation", func() error { return errUnless(sawPreAllocation(p.RankOf(0, 0), 18, d0.session)) })
		x.preAllocate(p, 0, 18, []byte(other.Manifests[0].Wire))
		failedFrom(d0, 18, 0)
		x.expect(18, kvwire.Failed, 0)
		testutil.Eventually(t, 2*time.Second, "the refusal", func() error {
			return errUnless(hasError(p.RankOf(0, 0), ReasonPreAllocationRefused, "2 pre-allocations for room 18"))
		})
	})
	t.Run("an unregistered session hears nothing", func(t *testing.T) {
		stranger := newDecodeRank(t, "127.0.0.1:16002")
		q := kvcontract.PreAllocation{Room: 16, SessionID: stranger.session, Manifest: manifest}
		stranger.send(p.RankOf(0, 0).Endpoint, q.Frames())
		testutil.Eventually(t, 2*time.Second, "the refusal", func() error {
			return errUnless(hasError(p.RankOf(0, 0), ReasonPreAllocationRefused, "no accepted registration"))
		})
		stranger.expectSilence(200 * time.Millisecond)
	})
	t.Run("a malformed pre-allocation", func(t *testing.T) {
		d0.send(p.RankOf(0, 0).Endpoint, [][]byte{[]byte("017"), []byte(d0.session), manifest})
		testutil.Eventually(t, 2*time.Second, "the error", func() error { return errUnless(hasError(p.RankOf(0, 0), ReasonMalformedMessage, "leading zero")) })
		d0.expectSilence(200 * time.Millisecond)
	})
	t.Run("scripts play on the contract wire", func(t *testing.T) {
		p.Script(17, Failure())
		d0.preAllocate(p, 0, 17, manifest)
		d1.preAllocate(p, 0, 17, manifest)
		d0.expect(17, kvwire.Failed, 0)
		d1.expect(17, kvwire.Failed, 0)
	})
}

// A contract the engine accepts but whose manifests its check crashes on (a
// sliding full-suffix group without a window, on both sides): the room is
// never answered.
func TestContractUnusableForManifests(t *testing.T) {
	v := pairVectors(t, "sliding-p2-d2")
	v.Prefill.Contract = strings.Replace(v.Prefill.Contract, `"sliding_window_tokens":128`, `"sliding_window_tokens":null`, 1)
	v.Decode.Contract = strings.Replace(v.Decode.Contract, `"sliding_window_tokens":128`, `"sliding_window_tokens":null`, 1)
	p := contractPeer(t, v)
	fleet := contractFleet(t, p, v, 0)
	for _, d := range fleet {
		d.preAllocate(p, 0, 5, []byte(v.Manifests[0].Wire))
	}
	testutil.Eventually(t, 2*time.Second, "the error", func() error { return errUnless(hasError(p.RankOf(0, 0), ReasonNeverAnswers, "sliding")) })
	fleet[0].expectSilence(200 * time.Millisecond)
}

func hasError(r *Rank, reason ErrorReason, detail string) bool {
	for _, e := range r.Errors() {
		if e.Reason == reason && strings.Contains(e.Detail, detail) {
			return true
		}
	}
	return false
}

func sawPreAllocation(r *Rank, room int64, session string) bool {
	for _, q := range r.PreAllocations() {
		if q.Room == room && q.SessionID == session {
			return true
		}
	}
	return false
}
