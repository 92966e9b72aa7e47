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
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A prefill rollout through the manager: after the pair is edited from
// prefill TP 8 to TP 4, its ConfigMaps carry both plan sets, the new one
// current (status.plan.hash, and index.json for older agents); an edit to
// layouts sharing neither role with them publishes the new set alone.
func TestPrefillRolloutPublishesBothSets(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "roll").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	oldHash := got.Status.Plan.Hash
	oldPlan := plannedJSON(t, got)

	got = waitObserved(t, updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = fixtures.Pair(ns, "roll").Spec(fixtures.Llama70B(4, 4)).Obj().Spec }))
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if got.Status.Plan.Hash == oldHash {
		t.Fatal("the plan hash did not change with the prefill layout")
	}
	testutil.Eventually(t, settle, "both sets published", func() error {
		sets, err := planstore.LoadEngineRankSets(planObjects(t, got), []int{0, 1, 2, 3})
		switch {
		case err != nil:
			return err
		case len(sets.Sets) != 2 || sets.Current != got.Status.Plan.Hash || sets.Sets[0].PlanHash != got.Status.Plan.Hash || sets.Sets[1].PlanHash != oldHash:
			return fmt.Errorf("current %s, %d sets", short(sets.Current), len(sets.Sets))
		case sets.Sets[1].Layout.Prefill.TPSize != 8 || sets.Sets[0].Layout.Prefill.TPSize != 4:
			return fmt.Errorf("prefill TP %d and %d, want 4 then 8", sets.Sets[0].Layout.Prefill.TPSize, sets.Sets[1].Layout.Prefill.TPSize)
		}
		return nil
	})
	// what an older agent reads (index.json alone) is the current set, as planned
	if published, _ := json.Marshal(publishedSet(t, got)); !bytes.Equal(published, plannedJSON(t, got)) {
		t.Fatal("index.json does not describe the current spec's plans")
	}
	// the earlier set is byte for byte what was planned for prefill TP 8
	split, err := planstore.SplitSets(planObjects(t, got))
	if err != nil {
		t.Fatal(err)
	}
	old, err := planstore.LoadPlanSet(split[1].Objects)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(old); !bytes.Equal(b, oldPlan) {
		t.Fatal("the earlier set differs from the plans made for prefill TP 8")
	}
	if c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished); !strings.Contains(c.Message, "1 earlier plan sets still published") {
		t.Fatalf("PlansPublished: %s", c.Message)
	}

	got = waitObserved(t, updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = fixtures.Pair(ns, "roll").Spec(fixtures.Llama70B(2, 2)).Obj().Spec }))
	// The earlier generations stay (and their sets) through their grace
	// (status.generations); past it, with nothing using them, they go. The
	// requeue at the grace's end is in real time: a pod appearing
	// reconciles the pair now.
	testClock.advance(GenerationGrace + lastUsedStep)
	defer testClock.advance(-(GenerationGrace + lastUsedStep))
	runPod(t, fixtures.DecodePod(ns, "roll-0", "roll").Obj(), fixtures.RunningStatus(true))
	testutil.Eventually(t, settle, "the new set alone", func() error {
		objs := planObjects(t, got)
		if cm := objs[0]; cm.Data[planstore.SetsKey] != "" {
			return fmt.Errorf("%s still holds %s", cm.Name, planstore.SetsKey)
		}
		sets, err := planstore.LoadEngineRankSets(objs, []int{0})
		if err != nil || len(sets.Sets) != 1 || sets.Current != got.Status.Plan.Hash {
			return fmt.Errorf("%d sets, %v", len(sets.Sets), err)
		}
		return nil
	})
}

// planObjects are the pair's plan ConfigMaps as planstore objects, the
// index first.
func planObjects(t *testing.T, p *pdv1.PDPair) []planstore.Object {
	t.Helper()
	var objs []planstore.Object
	for _, cm := range planConfigMaps(t, p) {
		o := planObject(&cm)
		if cm.Name == planstore.IndexConfigMapName(p.Name) {
			objs = append([]planstore.Object{o}, objs...)
		} else {
			objs = append(objs, o)
		}
	}
	return objs
}

// After a restart the manager has no memory of what it published: it
// reads the earlier sets back and keeps only those the operator vouches
// for (its own plansets.sig for this pair, or status.plan.hash), each
// verified end to end.
func TestEarlierSetsReadBackOnlyWhenVouchedFor(t *testing.T) {
	key := func(seed byte) *planstore.Signer {
		s := make([]byte, ed25519.SeedSize)
		s[0] = seed
		return planstore.NewSigner(ed25519.NewKeyFromSeed(s))
	}
	p8 := fixtures.Pair("ns", "roll").Spec(fixtures.Llama70B(8, 4)).Obj()
	p4 := fixtures.Pair("ns", "roll").Spec(fixtures.Llama70B(4, 4)).Obj()
	p4.UID = "uid-1"
	old, cur := planPair(p8, transferplan.DefaultBudget), planPair(p4, transferplan.DefaultBudget)
	published := func(signer *planstore.Signer, edit func(map[string]*corev1.ConfigMap)) map[string]*corev1.ConfigMap {
		pub, err := planstore.EncodeSets("roll", [][]planstore.Object{cur.objects, old.objects})
		if err != nil {
			t.Fatal(err)
		}
		owned := map[string]*corev1.ConfigMap{}
		for i, o := range pub.Objects {
			if i == 0 {
				o.Data = maps.Clone(o.Data)
				if err := signer.Sign("ns", "roll", "uid-1", 3, &o); err != nil {
					t.Fatal(err)
				}
			}
			owned[o.Name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name}, Data: o.Data, BinaryData: maps.Clone(o.BinaryData)}
		}
		if edit != nil {
			edit(owned)
		}
		return owned
	}
	cases := []struct {
		name       string
		signer     *planstore.Signer // the manager's key; nil: it signs nothing
		statusHash string
		edit       func(map[string]*corev1.ConfigMap)
		want       []string
	}{
		{name: "signed by this manager", signer: key(1), want: []string{cur.hash, old.hash}},
		{name: "signed by another key", signer: key(2), want: []string{cur.hash}},
		{name: "unsigned manager, status names the earlier set", statusHash: old.hash, want: []string{cur.hash, old.hash}},
		{name: "unsigned manager, status names the current set", statusHash: cur.hash, want: []string{cur.hash}},
		{name: "a rank of the earlier set edited", signer: key(1), want: []string{cur.hash}, edit: func(owned map[string]*corev1.ConfigMap) {
			for _, cm := range owned {
				if _, ok := cm.BinaryData[planstore.SetRankKey(1, 0)]; ok {
					cm.BinaryData[planstore.SetRankKey(1, 0)] = cm.BinaryData[planstore.SetRankKey(1, 1)]
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &PDPairReconciler{plans: newPlanCache(), Signer: tc.signer}
			pair := p4.DeepCopy()
			if tc.statusHash != "" {
				pair.Status.Plan = &pdv1.PlanSummary{Hash: tc.statusHash}
			}
			pub, err := r.publishedSets(context.Background(), pair, cur, published(key(1), tc.edit), modelConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pub.Published, tc.want) {
				t.Fatalf("published %v, want %v", pub.Published, tc.want)
			}
		})
	}
}
