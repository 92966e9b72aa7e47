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
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// engineContracts reads a pair of contracts the engine built (the golden
// vectors of pkg/transferplan).
func engineContracts(t *testing.T, vector string) (prefill, decode string) {
	t.Helper()
	raw, err := os.ReadFile("../pkg/transferplan/testdata/contract/" + vector + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ PrefillContract, DecodeContract string }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.PrefillContract, v.DecodeContract
}

// An inline contract pair (GQA, 2 KV heads, prefill TP 4 → decode TP 1) is
// compatible, its plans publish as format version 2 with the idle prefill
// ranks as decode rank 0's dummies, and the status names the sources.
func TestContractPairInlinePublishesPlans(t *testing.T) {
	ns := newNamespace(t)
	pre, dec := engineContracts(t, "mha-gqa2-p4-d1-replicas")
	pair := contractPair(ns, "inline", inline(pre), inline(dec))
	create(t, pair)
	got := waitObserved(t, pair)
	c := wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	if !strings.Contains(c.Message, "CacheContract wire") || !strings.Contains(c.Message, "(spec.cacheContracts.prefill.inline)") || !strings.Contains(c.Message, "[1 3]") {
		t.Errorf("LayoutCompatible message %q does not name the wire, the source and the idle ranks", c.Message)
	}
	wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
	st := got.Status.Contracts
	if st == nil || st.Prefill.Source != pdv1.ContractSourceSpec || st.Prefill.From != "spec.cacheContracts.prefill.inline" || len(st.Decode.SHA256) != 64 ||
		st.Prefill.Bytes != int64(len(pre)) || st.Decode.ObservedAt == nil || st.Decode.Message != "" {
		t.Fatalf("status.contracts %+v", st)
	}
	objs := published(t, got)
	idx, err := planstore.LoadIndex(objs)
	if err != nil || idx.FormatVersion != 2 || idx.Layout.Wire != transferplan.WireCacheContract || idx.Layout.DecodeContractSHA256 != st.Decode.SHA256 {
		t.Fatalf("index %+v, %v", idx, err)
	}
	plan, _, _, err := planstore.LoadRank(objs, 0)
	if err != nil || plan.RequiredPrefillResponseNum != 2 || len(plan.Targets) != 4 || !plan.Targets[1].IsDummy || !plan.Targets[3].IsDummy {
		t.Fatalf("rank 0 plan %+v, %v", plan, err)
	}
	if got.Status.Plan == nil || got.Status.Plan.Hash != idx.PlanHash || len(got.Status.Plan.IdlePrefillTPRanks) != 2 {
		t.Fatalf("status.plan %+v", got.Status.Plan)
	}
}

// published reads a pair's plan ConfigMaps as planstore objects.
func published(t *testing.T, p *pdv1.PDPair) []planstore.Object {
	t.Helper()
	var objs []planstore.Object
	for _, cm := range planConfigMaps(t, p) {
		objs = append(objs, planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData})
	}
	return objs
}

// A contract in a ConfigMap: missing, then given, then changed to one the
// engine refuses; the operator follows each change without a new
// generation and says what differs.
func TestContractPairFollowsItsConfigMap(t *testing.T) {
	ns := newNamespace(t)
	pre, dec := engineContracts(t, "mha-gqa2-p4-d1-replicas")
	pair := contractPair(ns, "from-configmap", inline(pre), fromConfigMap("decode-contract", "contract.json"))
	create(t, pair)
	c := waitCondition(t, pair, pdv1.ReasonContractUnavailable)
	if !strings.Contains(c.Message, `ConfigMap "decode-contract" does not exist in namespace`) || !strings.Contains(c.Message, "Fix: create ConfigMap decode-contract") {
		t.Errorf("message %q", c.Message)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "decode-contract"}, Data: map[string]string{"contract.json": dec}}
	create(t, cm)
	waitCondition(t, pair, pdv1.ReasonCompatible)
	var got pdv1.PDPair
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), &got); err != nil {
		t.Fatal(err)
	}
	if src := got.Status.Contracts.Decode.From; !strings.HasPrefix(src, "ConfigMap decode-contract key contract.json (resourceVersion ") {
		t.Errorf("decode source %q", src)
	}
	generation := got.Generation

	// The decode is moved to pages of 32 tokens: the engine refuses the pair.
	cm.Data["contract.json"] = strings.Replace(dec, `"prefix_granularity":16`, `"prefix_granularity":32`, 1)
	if cm.Data["contract.json"] == dec {
		t.Fatal("the vector's contract has no prefix_granularity 16")
	}
	if err := k8s.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	c = waitCondition(t, pair, pdv1.ReasonContractMismatchPrefixGranularity)
	if !strings.Contains(c.Message, "prefix_granularity differs: prefill 16, decode 32") {
		t.Errorf("message %q does not name both values", c.Message)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), &got); err != nil || got.Generation != generation {
		t.Fatalf("generation %d, was %d (%v)", got.Generation, generation, err)
	}
}

// waitCondition waits for LayoutCompatible to carry reason and returns it.
func waitCondition(t *testing.T, p *pdv1.PDPair, reason pdv1.PDPairConditionReason) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	testutil.Eventually(t, settle, fmt.Sprintf("LayoutCompatible of %s is %s", p.Name, reason), func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		c = meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		if c == nil || c.Reason != string(reason) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	return c
}
