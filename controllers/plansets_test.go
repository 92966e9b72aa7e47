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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
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
		sets, err := planstore.LoadEngineRankSets(planObjects(t, got), []int{0, 1, 2, 3}, nil)
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
	testutil.Eventually(t, settle, "the new set alone", func() error {
		objs := planObjects(t, got)
		if cm := objs[0]; cm.Data[planstore.SetsKey] != "" {
			return fmt.Errorf("%s still holds %s", cm.Name, planstore.SetsKey)
		}
		sets, err := planstore.LoadEngineRankSets(objs, []int{0}, nil)
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
