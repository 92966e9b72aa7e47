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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A spec change that changes the number of shard ConfigMaps reaches a pod
// admitted before it, through the projection the webhook wrote, as the
// kubelet would sync it: no restart, no new pod spec. The volume is
// materialised from the API after each change exactly as the kubelet's
// atomic writer would, and the agent's loader reads it.
func TestShardCountChangeReachesARunningPod(t *testing.T) {
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	pair := readyPair(t, ns, key.Name)
	pod := admit(t, fixtures.DecodePod(ns, "decode-0", key.Name).RanksPerPod("4").Obj())
	dir := t.TempDir()

	// seen materialises the volume and checks what the pod's agent loads for
	// its last rank against the pair's published status.
	seen := func(pair *pdv1.PDPair) []string {
		t.Helper()
		if err := kubeletsim.MaterialiseVolume(context.Background(), k8s, pod, pdv1.AgentPlansVolume, dir); err != nil {
			t.Fatal(err)
		}
		_, _, hash, err := planstore.LoadEngineRankFromDir(dir, 3)
		if err != nil {
			t.Fatalf("loading engine rank 3 from the pod's plan volume: %v", err)
		}
		if hash != pair.Status.Plan.Hash {
			t.Fatalf("the pod's volume holds plan %s, the pair publishes %s", hash, pair.Status.Plan.Hash)
		}
		files, err := kubeletsim.VisibleFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	small := seen(pair)
	if n := len(pair.Status.Plan.ConfigMaps); n != 2 {
		t.Fatalf("decode TP 4 published in %v; want the index and one shard", pair.Status.Plan.ConfigMaps)
	}

	// Prefill TP 512 → decode TP 64 over 200 layers: every decode rank
	// pulls from 8 prefill ranks, and the plans need two shards.
	pair = changeSpec(t, key, fixtures.GQAPair(ns, key.Name, 512, 64, 200, 2048).Spec)
	if n := len(pair.Status.Plan.ConfigMaps); n < 3 {
		t.Fatalf("decode TP 64 published in %v; want at least two shards", pair.Status.Plan.ConfigMaps)
	}
	large := seen(pair)
	// The pod was admitted under decode TP 4: that generation's set stays
	// published beside the new one (set1-rank-*, plansets.json).
	ranks := slices.DeleteFunc(slices.Clone(large), func(f string) bool { return !strings.HasPrefix(f, "rank-") })
	if len(ranks) != 64 || !slices.Contains(large, planstore.RankKey(63)) || !slices.Contains(large, planstore.SignatureKey) || !slices.Contains(large, planstore.SetsKey) {
		t.Fatalf("after growing, the pod sees %d files (%v...); want the index, its signature and 64 rank plans, and the kept set beside them", len(large), large[:min(4, len(large))])
	}

	// Back to one shard: past the grace of the TP 64 generation nothing
	// uses, the second shard's ConfigMap is deleted, and its files leave
	// the pod's volume. The requeue at the grace's end is in real time: a
	// pod appearing reconciles the pair now.
	pair = changeSpec(t, key, fixtures.GQAPair(ns, key.Name, 8, 4, 4, 512).Spec)
	rolloutClock.advance(controllers.GenerationGrace + time.Minute)
	defer rolloutClock.advance(-(controllers.GenerationGrace + time.Minute))
	admit(t, fixtures.DecodePod(ns, "decode-1", key.Name).RanksPerPod("4").Obj())
	testutil.Eventually(t, settle, "the pair's stale shards deleted", func() error {
		files := seen(pair)
		if !slices.Equal(files, small) {
			return fmt.Errorf("the pod sees %d files, want the %d of the small plan", len(files), len(small))
		}
		return nil
	})
}

// changeSpec replaces the pair's spec and waits for the new plans.
func changeSpec(t *testing.T, key client.ObjectKey, spec pdv1.PDPairSpec) *pdv1.PDPair {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p pdv1.PDPair
		if err := k8s.Get(context.Background(), key, &p); err != nil {
			return err
		}
		p.Spec = spec
		return k8s.Update(context.Background(), &p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.WaitCondition(t, k8s, 2*time.Minute, key, pdv1.PDPairReady, metav1.ConditionTrue)
}
