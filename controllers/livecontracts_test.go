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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// contractPeer runs a contract-era prefill (its bootstrap server and
// ranks, on loopback) with the vector's prefill contract.
func contractPeer(t *testing.T, v fixtures.ContractPair, deferRegistration bool) *prefillpeer.Peer {
	t.Helper()
	p, err := prefillpeer.Start(prefillpeer.Config{Wire: kvwire.WireCacheContract, WorldSize: v.Prefill.TPSize, DPSize: v.Prefill.DPSize,
		Contract: v.PrefillContract, DeferRegistration: deferRegistration})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// waitPair waits until LayoutCompatible has the status and reason and its
// message, and status.contracts (as JSON), say every part of says.
func waitPair(t *testing.T, p *pdv1.PDPair, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason, says ...string) *pdv1.PDPair {
	t.Helper()
	var got pdv1.PDPair
	testutil.Eventually(t, settle, fmt.Sprintf("%s: LayoutCompatible=%s/%s saying %q", p.Name, status, reason, says), func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		if c == nil || c.Status != status || c.Reason != string(reason) || c.ObservedGeneration != got.Generation {
			return fmt.Errorf("condition %+v", c)
		}
		text := c.Message + fmt.Sprintf(" %+v", got.Status.Contracts)
		for _, s := range says {
			if !strings.Contains(text, s) {
				return fmt.Errorf("%q does not say %q", text, s)
			}
		}
		return nil
	})
	return &got
}

// A pair that leaves both contracts to the live engines: pending (and why)
// until the prefill registers with its bootstrap server and a decode
// engine registers with its agent; then compatible and published, with
// status.contracts naming both sources. A refresh that fails keeps the
// verdict and says so; a decode engine that registers a contract the engine
// cannot decode makes the pair incompatible, naming the pod.
func TestLiveContractsFromBootstrapAndAgents(t *testing.T) {
	ns := newNamespace(t)
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	peer := contractPeer(t, v, true)
	pair := contractPair(ns, "live", nil, nil)
	pair.Spec.Prefill.BootstrapAddress, pair.Spec.Decode.TensorParallelSize = peer.BootstrapAddr(), 2
	create(t, pair)

	got := waitPair(t, pair, metav1.ConditionUnknown, pdv1.ReasonContractPending,
		"the prefill's contract (PrefillBootstrap) is not read yet: GET "+livecontract.PrefillURL(peer.BootstrapAddr())+": NoContract: no prefill rank has registered",
		"the decode's contract (AgentRegistration) is not read yet: no decode pod is bound to the pair")
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonContractPending)
	wantCondition(t, got, pdv1.PDPairReconciling, metav1.ConditionTrue, pdv1.ReasonContractPending)
	if c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairStalled)); c != nil {
		t.Errorf("a pair waiting for its engines is Stalled: %+v", c)
	}
	if got.Status.Contracts == nil || got.Status.Contracts.Prefill.Source != pdv1.ContractSourcePrefillBootstrap || got.Status.Contracts.Decode.Source != pdv1.ContractSourceAgentRegistration {
		t.Fatalf("status.contracts %+v", got.Status.Contracts)
	}

	if err := peer.RegisterRanks(); err != nil {
		t.Fatal(err)
	}
	agent := fixtures.NewAgentProbe("")
	defer agent.Close()
	runPod(t, fixtures.DecodePod(ns, "decode-0", "live").WithAgent(agent.Port()).Obj(), fixtures.RunningStatus(false))
	got = waitPair(t, pair, metav1.ConditionUnknown, pdv1.ReasonContractPending,
		"the decode's contract (AgentRegistration) is not read yet: none of the 1 decode pods' agents reports an engine contract: 1 answered")
	if strings.Contains(meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible)).Message, "prefill's contract") {
		t.Errorf("the prefill's contract is read, and still reported missing")
	}

	agent.SetContract(0, v.DecodeContract)
	got = waitPair(t, pair, metav1.ConditionTrue, pdv1.ReasonCompatible, "CacheContract wire")
	wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
	pre, dec := got.Status.Contracts.Prefill, got.Status.Contracts.Decode
	wantPre, _ := plancontract.Parse(v.PrefillContract)
	wantDec, _ := plancontract.Parse(v.DecodeContract)
	if pre.From != livecontract.PrefillURL(peer.BootstrapAddr()) || pre.SHA256 != wantPre.SHA256() || pre.ObservedAt == nil || pre.Message != "" {
		t.Errorf("status.contracts.prefill %+v", pre)
	}
	wantFrom := fmt.Sprintf("pod decode-0 rank 0 (%s)", livecontract.AgentContractURL("127.0.0.1:"+strconv.Itoa(int(agent.Port())), 0))
	if dec.From != wantFrom || dec.SHA256 != wantDec.SHA256() || dec.Bytes != int64(len(v.DecodeContract)) || dec.ObservedAt == nil {
		t.Errorf("status.contracts.decode %+v, want from %q", dec, wantFrom)
	}
	idx, err := planstore.LoadIndex(published(t, got))
	if err != nil || idx.Layout.PrefillContractSHA256 != wantPre.SHA256() || idx.Layout.DecodeContractSHA256 != wantDec.SHA256() {
		t.Fatalf("published index %+v, %v", idx, err)
	}

	// The bootstrap server stops answering: the verdict stands, the status says why.
	peer.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.Fault500})
	got = waitPair(t, pair, metav1.ConditionTrue, pdv1.ReasonCompatible, "the last read failed; the verdict keeps the contract read at", "HTTPStatus: HTTP 500")
	wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
	peer.SetBootstrapFault(prefillpeer.BootstrapFault{})

	// The decode engine registers a contract the engine cannot decode.
	agent.SetContract(0, []byte(`{"plan":{"prefix_granularity":16}}`))
	waitPair(t, pair, metav1.ConditionFalse, pdv1.ReasonContractInvalid, "cacheContracts.decode (pod decode-0 rank 0 (")
	if n := len(planConfigMaps(t, got)); n != 0 {
		t.Errorf("%d plan ConfigMaps stay for an incompatible pair", n)
	}
}

// Every way a live source fails is a condition that names what and the
// numbers, written by a reconcile that did not wait for it (the read is in
// the background), and no panic: a bootstrap server that hangs, answers
// 2 GiB, garbage or the v1 wire, reports another TP size than the spec;
// an agent listing a malformed contract; two decode engines that disagree.
func TestLiveContractSourcesThatFail(t *testing.T) {
	ns := newNamespace(t)
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for i := 0; i < (2<<30)/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	faulty := func(f prefillpeer.Fault) string {
		p := contractPeer(t, v, false)
		p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: f})
		return p.BootstrapAddr()
	}
	for i, c := range []struct {
		name   string
		addr   string
		tp     int32
		status metav1.ConditionStatus
		reason pdv1.PDPairConditionReason
		says   []string
	}{
		{"hangs", faulty(prefillpeer.FaultHang), 4, metav1.ConditionUnknown, pdv1.ReasonContractPending, []string{"Unreachable: no HTTP answer within 3s (refused, unresolvable, silent or not HTTP)"}},
		{"answers 2 GiB", huge.Listener.Addr().String(), 4, metav1.ConditionUnknown, pdv1.ReasonContractPending,
			[]string{"TooLarge: the answer is longer than " + strconv.Itoa(livecontract.MaxPrefillAnswerBytes) + " bytes"}},
		{"answers garbage", faulty(prefillpeer.FaultGarbage), 4, metav1.ConditionUnknown, pdv1.ReasonContractPending, []string{"Malformed: the answer (46 bytes) is not a contract-era bootstrap server's"}},
		{"answers the v1 wire", faulty(prefillpeer.FaultOtherWire), 4, metav1.ConditionUnknown, pdv1.ReasonContractPending, []string{"WrongWire", "v1 wire (prefill TP 4, DP 1"}},
		{"runs another TP than the spec", contractPeer(t, v, false).BootstrapAddr(), 8, metav1.ConditionFalse, pdv1.ReasonContractParallelismMismatch,
			[]string{"reports TP 4, DP 1; spec.prefill says TP 8, DP 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pair := contractPair(ns, fmt.Sprintf("bootstrap-%d", i), nil, inline(string(v.DecodeContract)))
			pair.Spec.Prefill.BootstrapAddress, pair.Spec.Prefill.TensorParallelSize, pair.Spec.Decode.TensorParallelSize = c.addr, c.tp, 2
			create(t, pair)
			if c.name == "hangs" { // written while the read waits: the reconcile did not
				waitPair(t, pair, metav1.ConditionUnknown, pdv1.ReasonContractPending, "not read yet: the first read is in flight")
			}
			got := waitPair(t, pair, c.status, c.reason, c.says...)
			if c.status == metav1.ConditionUnknown && !strings.Contains(got.Status.Contracts.Prefill.Message, c.says[0]) {
				t.Errorf("status.contracts.prefill.message %q does not say %q", got.Status.Contracts.Prefill.Message, c.says[0])
			}
		})
	}

	// Agents: one lists a malformed contract, then two disagree, then one
	// goes and the rest agree.
	broken := fixtures.NewAgentProbe("")
	defer broken.Close()
	broken.SetContract(0, v.DecodeContract)
	broken.Misreport(0, "sha256", "not-a-sha")
	other := fixtures.NewAgentProbe("")
	defer other.Close()
	other.SetContract(1, []byte(strings.Replace(string(v.DecodeContract), `"prefix_granularity":16`, `"prefix_granularity":32`, 1)))
	good := fixtures.NewAgentProbe("")
	defer good.Close()
	good.SetContract(0, v.DecodeContract)
	pair := contractPair(ns, "agents", inline(string(v.PrefillContract)), nil)
	pair.Spec.Decode.TensorParallelSize = 2
	create(t, pair)
	runPod(t, fixtures.DecodePod(ns, "decode-a", "agents").WithAgent(broken.Port()).Obj(), fixtures.RunningStatus(false))
	waitPair(t, pair, metav1.ConditionUnknown, pdv1.ReasonContractPending, "1 did not answer: decode-a (engineContracts: rank 0's sha256 (9 bytes) is not 64 hex digits)")
	runPod(t, fixtures.DecodePod(ns, "decode-b", "agents").WithAgent(other.Port()).Obj(), fixtures.RunningStatus(false))
	runPod(t, fixtures.DecodePod(ns, "decode-c", "agents").WithAgent(good.Port()).Obj(), fixtures.RunningStatus(false))
	waitPair(t, pair, metav1.ConditionUnknown, pdv1.ReasonContractPending, "the decode engines registered 2 different contracts", "pod decode-b ranks [1]", "pod decode-c ranks [0]")
	if err := k8s.Delete(context.Background(), fixtures.DecodePod(ns, "decode-b", "agents").Obj()); err != nil {
		t.Fatal(err)
	}
	waitPair(t, pair, metav1.ConditionTrue, pdv1.ReasonCompatible, "pod decode-c rank 0 (")
}
