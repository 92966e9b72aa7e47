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
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// forgedPublication is what someone who can write ConfigMaps but not sign
// would publish for a pair: the pair's own plans with
// the destinations of decode rank 0's first two fragments swapped (in
// bounds, well formed, every hash in its index right), so that rank 0's
// KV would land in the wrong buffers.
func forgedPublication(t *testing.T, pair *pdv1.PDPair) ([]planstore.Object, string) {
	t.Helper()
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatal(err)
	}
	f := set.Plans[0].Targets[0].Fragments
	f[0].DstByteOffset, f[1].DstByteOffset = f[1].DstByteOffset+f[1].BytesPerPage/2, f[0].DstByteOffset
	objs, err := planstore.Encode(pair.Name, set)
	if err != nil {
		t.Fatal(err)
	}
	return objs, set.Hash()
}

// foreign is a ConfigMap of someone else's (no label, no owner) under
// name, holding the keys of objs.
func foreign(ns, name string, objs ...planstore.Object) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{}, BinaryData: map[string][]byte{}}
	for _, o := range objs {
		for k, v := range o.Data {
			cm.Data[k] = v
		}
		for k, v := range o.BinaryData {
			cm.BinaryData[k] = v
		}
	}
	return cm
}

// The attack of issue 19 against the real API server: an unlabelled
// ConfigMap named like a shard the operator does not use (llama-plans-31)
// with an index.json and the rank files of plans the operator never
// published. The decode pod's volume, materialised from the API as the
// kubelet does, keeps the operator's files (its sources are ordered for
// them to win), and the agent's loader, verifying the signature projected
// beside the index, loads the operator's plans. Projected in the order the
// webhook used before (the index first), the forged index wins the
// collision and an unsigned loader takes it (the attack, reproduced); the
// signed loader refuses it. The same holds when the forged objects replace the
// operator's under their own names.
func TestForeignPlanConfigMapIsNotLoaded(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	pair := readyPair(t, ns, "llama")
	pod := admit(t, fixtures.DecodePod(ns, "decode-0", "llama").Obj())
	forged, forgedHash := forgedPublication(t, pair)
	if forgedHash == pair.Status.Plan.Hash {
		t.Fatal("the forged plans are the published ones")
	}
	shadow := foreign(ns, planstore.ShardConfigMapName("llama", 31), forged...)
	if err := k8s.Create(ctx, shadow); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keys := testKeys(t)
	load := func(p *corev1.Pod) (planstore.EngineRanks, error) {
		t.Helper()
		if err := kubeletsim.MaterialiseVolume(ctx, k8s, p, pdv1.AgentPlansVolume, dir); err != nil {
			t.Fatal(err)
		}
		st, err := planstore.ReadSignatureDir(dir, keys, ns, "llama")
		if err != nil {
			return planstore.EngineRanks{}, err
		}
		if st.PlanHash != pair.Status.Plan.Hash || st.UID != string(pair.UID) || st.Generation != pair.Generation {
			t.Fatalf("signature %+v for pair %s (uid %s, generation %d, plan %s)", st, pair.Name, pair.UID, pair.Generation, pair.Status.Plan.Hash)
		}
		return planstore.LoadSealedEngineRanksFromDir(dir, st.Seal(), []int{0, 1, 2, 3})
	}

	// The pod as the webhook admits it: the operator's files win.
	_, collisions, err := kubeletsim.VolumePayload(ctx, k8s, pod, pdv1.AgentPlansVolume)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(collisions, kubeletsim.Collision{Path: planstore.IndexKey, Earlier: shadow.Name, Later: "llama-plans"}) ||
		!slices.Contains(collisions, kubeletsim.Collision{Path: planstore.RankKey(0), Earlier: shadow.Name, Later: "llama-plans-0"}) {
		t.Fatalf("collisions %+v: the shadow's index and rank 0 should lose to the operator's", collisions)
	}
	if got, err := load(pod); err != nil || got.PlanHash != pair.Status.Plan.Hash {
		t.Fatalf("the admitted pod next to the shadow loads %v, %v; want the published %s", got.PlanHash, err, pair.Status.Plan.Hash)
	}

	// The projection order of the issue: the shadow's files win.
	old := pod.DeepCopy()
	v := fixtures.FindVolume(old, pdv1.AgentPlansVolume)
	slices.Reverse(v.Projected.Sources)
	v.Projected.Sources[0].ConfigMap.Items = nil
	if err := kubeletsim.MaterialiseVolume(ctx, k8s, old, pdv1.AgentPlansVolume, dir); err != nil {
		t.Fatal(err)
	}
	if got, err := planstore.LoadEngineRanksFromDir(dir, []int{0}); err != nil || got.PlanHash != forgedHash {
		t.Fatalf("the attack does not reproduce: without the signature the loader gives %v, %v; want the forged %s", got.PlanHash, err, forgedHash)
	}
	_, err = load(old)
	wantReason(t, err, planstore.ReasonSealMismatch)

	// The operator's objects replaced by the forged ones under their own
	// names (deleted and re-created by someone else, between the
	// operator's writes and a kubelet sync): refused too.
	if err := k8s.Delete(ctx, shadow); err != nil {
		t.Fatal(err)
	}
	replaced := pod.DeepCopy()
	v = fixtures.FindVolume(replaced, pdv1.AgentPlansVolume)
	v.Projected.Sources = v.Projected.Sources[len(v.Projected.Sources)-1:] // the index only
	v.Projected.Sources[0].ConfigMap.Name = shadow.Name                    // now holding the forged objects
	v.Projected.Sources[0].ConfigMap.Items = nil
	if err := k8s.Create(ctx, foreign(ns, shadow.Name, forged...)); err != nil {
		t.Fatal(err)
	}
	_, err = load(replaced)
	wantReason(t, err, planstore.ReasonMissingSignature)
}

func wantReason(t *testing.T, err error, reason planstore.Reason) {
	t.Helper()
	var fe *planstore.FormatError
	if !errors.As(err, &fe) || fe.Reason != reason {
		t.Fatalf("error %v, want planstore reason %s", err, reason)
	}
}
