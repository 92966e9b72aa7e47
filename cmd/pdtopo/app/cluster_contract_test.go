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

package app_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/test/clitest"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

const contractSample = "pd_v1alpha1_pdpair_contract_gqa_p8_d4.yaml"

// planJSON runs `plan ... -o json` and returns the decoded plan set.
func planJSON(t *testing.T, run func(...string) (int, string, string), args ...string) map[string]any {
	t.Helper()
	code, out, errOut := run(append(args, "-o", "json")...)
	if code != cli.ExitOK {
		t.Fatalf("plan %v: exit %d: %s", args, code, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("plan %v: %v", args, err)
	}
	return v
}

// offlineContractPlans plans pair offline with both contracts inline.
func offlineContractPlans(t *testing.T, pair *pdv1.PDPair) map[string]any {
	t.Helper()
	pair = pair.DeepCopy()
	pair.APIVersion, pair.Kind = pdv1.GroupVersion.String(), "PDPair"
	raw, err := yaml.Marshal(pair)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pair.yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return planJSON(t, func(a ...string) (int, string, string) { return clitest.Run(t, "", a...) }, "plan", "-f", file)
}

// `plan NAME` of contract pairs against a real API server and operator:
// the plans the operator published (the same as planned offline from the
// same contracts), for contracts inline and for a prefill contract read
// from a live bootstrap server with the decode's in a ConfigMap; the
// operator's verdict (exit 3) when that ConfigMap changes to a contract
// the engine refuses; and exit 2 saying why for a pair still waiting for
// its engines.
func TestClusterPlanOfContractPairs(t *testing.T) {
	tc := liveCluster(t)
	inCluster := func(a ...string) (int, string, string) { return tc.cli(t, append(a, "--context", "live")...) }
	ctx := context.Background()

	tc.applySample(t, nsA, contractSample, "contract-inline")
	pair := tc.waitSettled(t, nsA, "contract-inline")
	if pair.Status.Plan == nil {
		t.Fatalf("no plans published: %+v", pair.Status.Conditions)
	}
	code, out, errOut := inCluster("plan", "contract-inline")
	if code != cli.ExitOK || !strings.Contains(out, "Plans: published, plan hash "+pair.Status.Plan.Hash[:12]) || strings.Contains(errOut, "planning from the spec") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	published := planJSON(t, inCluster, "plan", "contract-inline")
	offline := planJSON(t, func(a ...string) (int, string, string) { return clitest.Run(t, "", a...) }, "plan", "-f", "../../../config/samples/"+contractSample)
	if !reflect.DeepEqual(published, offline) {
		t.Errorf("the published plans differ from the plans of the same contracts offline")
	}

	// The prefill's contract from its bootstrap server, the decode's from a ConfigMap.
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	peer := clitest.StartContractPeer(t, v, kvwire.WireCacheContract)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "live-decode-contract"}, Data: map[string]string{"contract.json": string(v.DecodeContract)}}
	if err := tc.k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	live := fixtures.Pair(nsA, "contract-live").Wire(pdv1.WireCacheContract).PrefillTP(4).BootstrapAddress(peer.BootstrapAddr()).DecodeTP(2).
		DecodeContract(pdv1.CacheContractSource{ConfigMapKeyRef: &pdv1.ConfigMapKeyReference{Name: cm.Name, Key: "contract.json"}}).Obj()
	if err := tc.k8s.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(ctx, live) })
	pair = tc.waitFor(t, nsA, live.Name, func(p *pdv1.PDPair) bool {
		return p.Status.ObservedGeneration == p.Generation && p.Status.Plan != nil && meta.IsStatusConditionTrue(p.Status.Conditions, string(pdv1.PDPairReady))
	})
	if st := pair.Status.Contracts; st == nil || st.Prefill.Source != pdv1.ContractSourcePrefillBootstrap || st.Decode.Source != pdv1.ContractSourceSpec {
		t.Fatalf("status.contracts %+v", pair.Status.Contracts)
	}
	inline := live.DeepCopy()
	inline.Spec.Prefill.BootstrapAddress = ""
	inline.Spec.CacheContracts = &pdv1.CacheContracts{Prefill: &pdv1.CacheContractSource{Inline: string(v.PrefillContract)}, Decode: &pdv1.CacheContractSource{Inline: string(v.DecodeContract)}}
	if got, want := planJSON(t, inCluster, "plan", live.Name), offlineContractPlans(t, inline); !reflect.DeepEqual(got["plans"], want["plans"]) || got["compatible"] != true {
		t.Errorf("the plans published from the live prefill differ from the plans of the same contracts offline")
	}

	// The decode's ConfigMap changes to pages of 32 tokens: the operator's verdict.
	cm.Data["contract.json"] = strings.Replace(string(v.DecodeContract), `"prefix_granularity":16`, `"prefix_granularity":32`, 1)
	if err := tc.k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	tc.waitFor(t, nsA, live.Name, func(p *pdv1.PDPair) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		return c != nil && c.Reason == string(pdv1.ReasonContractMismatchPrefixGranularity)
	})
	code, out, errOut = inCluster("plan", live.Name, "-o", "json")
	if code != cli.ExitIncompatible || !strings.Contains(out, `"compatible": false`) || !strings.Contains(out, "ContractMismatchPrefixGranularity") || !strings.Contains(out, "prefill 16, decode 32") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}

	// A pair still waiting for its prefill: nothing to show, and why.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // accepts, never answers
	waiting := live.DeepCopy()
	waiting.ObjectMeta = metav1.ObjectMeta{Namespace: nsA, Name: "contract-waiting"}
	waiting.Spec.Prefill.BootstrapAddress = l.Addr().String()
	if err := tc.k8s.Create(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(ctx, waiting) })
	tc.waitFor(t, nsA, waiting.Name, func(p *pdv1.PDPair) bool {
		return meta.IsStatusConditionPresentAndEqual(p.Status.Conditions, string(pdv1.PDPairLayoutCompatible), metav1.ConditionUnknown)
	})
	code, out, errOut = inCluster("plan", waiting.Name)
	if code != cli.ExitUsage || !strings.Contains(errOut, "PDPair contract-waiting has no published plans to show") ||
		!strings.Contains(errOut, "ContractPending") || !strings.Contains(errOut, "prefill: PrefillBootstrap, decode: Spec") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
}
