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

package webhooks_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A decode rollout from TP 4 to TP 2 through the real API server, the
// manager's controller and its webhook: a pod of the old template that
// pins decode layout tp=4,dp=1 is admitted under it while the pair still
// serves that generation (its agent told so, its ranks checked against
// TP 4); a pinned layout the pair never served is refused naming the
// served ones; an unpinned pod is admitted under the spec's layout.
func TestPinnedDecodeLayoutMidRollout(t *testing.T) {
	ns := newNamespace(t)
	p := readyPair(t, ns, "roll")
	admit(t, fixtures.DecodePod(ns, "old-0", "roll").Obj()) // stays: it keeps generation TP 4 in use

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var latest pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &latest); err != nil {
			return err
		}
		latest.Spec = fixtures.GQAPair(ns, "roll", 8, 2, 4, 1024).Spec
		return k8s.Update(context.Background(), &latest)
	})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the pair Ready at decode TP 2 with generation TP 4 still served", func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairReady))
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != got.Generation || len(got.Status.Generations) != 2 {
			return fmt.Errorf("Ready %+v, generations %+v", ready, got.Status.Generations)
		}
		return nil
	})

	old := admit(t, fixtures.DecodePod(ns, "old-1", "roll").Annotate(pdv1.AnnotationDecodeLayout, "tp=4,dp=1").Obj())
	agent := fixtures.AgentContainer(old)
	if agent == nil || !slices.Contains(agent.Args, "--decode-layout=tp=4,dp=1") || !slices.Contains(agent.Args, "--rank-count=4") {
		t.Fatalf("pinned pod's agent args %v: want --decode-layout=tp=4,dp=1 and its 4 ranks", agent)
	}
	msg := refused(t, fixtures.DecodePod(ns, "odd", "roll").Annotate(pdv1.AnnotationDecodeLayout, "tp=8,dp=1").Obj())
	wantAll(t, msg, "DecodeLayoutNotServed", "pins decode layout tp=8,dp=1", "serves decode layouts tp=2,dp=1, tp=4,dp=1")
	msg = refused(t, fixtures.DecodePod(ns, "typo", "roll").Annotate(pdv1.AnnotationDecodeLayout, "tp=four").Obj())
	wantAll(t, msg, "DecodeLayoutNotServed", pdv1.AnnotationDecodeLayout, "not of the form")

	cur := admit(t, fixtures.DecodePod(ns, "new-0", "roll").Obj())
	if got := cur.Annotations[pdv1.AnnotationDecodeLayout]; got != "tp=2,dp=1" {
		t.Fatalf("unpinned pod admitted under %q, want the spec's tp=2,dp=1", got)
	}
	if a := fixtures.AgentContainer(cur); !slices.Contains(a.Args, "--rank-count=2") {
		t.Fatalf("unpinned pod's agent args %v: want its 2 ranks", a.Args)
	}
}

// An edit the engine refuses mid-rollout keeps the served generation: a
// pod of the old template pinning its decode layout is still admitted,
// an unpinned one is refused as before.
func TestPinnedPodOfKeptGenerationWhileTheSpecIsRefused(t *testing.T) {
	ns := newNamespace(t)
	p := readyPair(t, ns, "kept")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var latest pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &latest); err != nil {
			return err
		}
		latest.Spec.Decode.TensorParallelSize = 3
		return k8s.Update(context.Background(), &latest)
	})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the pair incompatible with generation TP 4 kept", func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != got.Generation || len(got.Status.Generations) != 1 || got.Status.Generations[0].Current {
			return fmt.Errorf("LayoutCompatible %+v, generations %+v", c, got.Status.Generations)
		}
		return nil
	})
	pinned := admit(t, fixtures.DecodePod(ns, "old-1", "kept").Annotate(pdv1.AnnotationDecodeLayout, "tp=4,dp=1").Obj())
	if a := fixtures.AgentContainer(pinned); a == nil || !slices.Contains(a.Args, "--decode-layout=tp=4,dp=1") {
		t.Fatalf("pinned pod's agent %v: want --decode-layout=tp=4,dp=1", a)
	}
	wantAll(t, refused(t, fixtures.DecodePod(ns, "new-0", "kept").Obj()), "PDPairIncompatible")
}
