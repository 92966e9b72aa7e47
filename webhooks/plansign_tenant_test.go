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
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

func testKeys(t *testing.T) planstore.PublicKeys {
	t.Helper()
	keys, err := planstore.ParsePublicKeys(strings.Join(testAgent.PlanPublicKeys, ","))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A namespace user who can write ConfigMaps and Secrets cannot steer a
// plan, against the real API server and manager: rewriting the index
// ConfigMap's plans and signature (and a Secret under the old seal's name)
// gets a refusal from the agent's plan source, as its admitted pod's
// command line builds it, and the manager puts its own bytes back; the
// operator's signed index of an older generation, replayed, is refused.
func TestTenantCannotSteerPlans(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	pair := readyPair(t, ns, key.Name)
	pod := admit(t, fixtures.DecodePod(ns, "decode-0", key.Name).Obj())
	args := strings.Join(pod.Spec.InitContainers[0].Args, " ")
	for _, want := range []string{"--plan-public-keys=" + testAgent.PlanPublicKeys[0], "--plan-pdpair=llama", fmt.Sprintf("--plan-min-generation=%d", pair.Generation)} {
		if !strings.Contains(args, want) {
			t.Fatalf("agent args %q lack %q", args, want)
		}
	}
	dir := t.TempDir()
	src := plansource.Dir{Path: dir, EngineRanks: []int{0, 1, 2, 3}, Signed: plansource.NewSigned(testKeys(t), ns, key.Name, pair.Generation)}
	load := func() (plansource.Plans, error) {
		t.Helper()
		if err := kubeletsim.MaterialiseVolume(ctx, k8s, pod, pdv1.AgentPlansVolume, dir); err != nil {
			t.Fatal(err)
		}
		return src.Load(ctx)
	}
	if p, err := load(); err != nil || p.Hash != pair.Status.Plan.Hash {
		t.Fatalf("the published plans: %q %v", p.Hash, err)
	}
	var published corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: planstore.IndexConfigMapName(key.Name)}, &published); err != nil {
		t.Fatal(err)
	}
	gen1 := maps.Clone(published.Data)

	// The tenant: its own plans and a signature edited to name them, and a
	// seal Secret as the old operator wrote it.
	forged, _ := forgedPublication(t, pair)
	sig := strings.Replace(gen1[planstore.SignatureKey], `"generation":`, `"generation":1`, 1)
	tampered := published.DeepCopy()
	tampered.Data = map[string]string{planstore.IndexKey: forged[0].Data[planstore.IndexKey], planstore.SignatureKey: sig}
	if err := k8s.Update(ctx, tampered); err != nil {
		t.Fatal(err)
	}
	seal := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name + "-plans-seal"}, Data: map[string][]byte{"seal.json": []byte(`{}`)}}
	if err := k8s.Create(ctx, seal); err != nil {
		t.Fatal(err)
	}
	if p, err := load(); err == nil {
		// the manager may have repaired it already; then it is the operator's
		if p.Hash != pair.Status.Plan.Hash {
			t.Fatalf("the tenant's index loaded: %q", p.Hash)
		}
	} else if !strings.Contains(err.Error(), string(planstore.ReasonBadSignature)) && !strings.Contains(err.Error(), string(planstore.ReasonMalformedSignature)) {
		t.Fatalf("the tenant's index: %v, want a signature refusal", err)
	}
	testutil.Eventually(t, settle, "the manager repairs the index ConfigMap", func() error {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&published), &cm); err != nil {
			return err
		}
		if !maps.Equal(cm.Data, gen1) {
			return fmt.Errorf("index ConfigMap still holds %d bytes of someone else's", len(cm.Data[planstore.IndexKey]))
		}
		return nil
	})
	if p, err := load(); err != nil || p.Hash != pair.Status.Plan.Hash {
		t.Fatalf("after the repair: %q %v", p.Hash, err)
	}

	// A new generation (the plans the same), then the old one replayed.
	spec := pair.Spec
	spec.Prefill.BootstrapAddress = "prefill-moved:8998"
	next := changeSpecTo(t, key, spec, pdv1.PDPairPlansPublished, metav1.ConditionTrue)
	testutil.Eventually(t, settle, "the index signed for the new generation", func() error {
		if _, err := load(); err != nil {
			return err
		}
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&published), &cm); err != nil {
			return err
		}
		if !strings.Contains(cm.Data[planstore.SignatureKey], fmt.Sprintf(`"generation":%d`, next.Generation)) {
			return fmt.Errorf("signature %s", cm.Data[planstore.SignatureKey])
		}
		return nil
	})
	// Replayed where the kubelet projects it (the manager repairs the
	// ConfigMap too quickly for a sync to be sure to catch it)...
	payload, _, err := kubeletsim.VolumePayload(ctx, k8s, pod, pdv1.AgentPlansVolume)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range gen1 {
		payload[k] = []byte(v)
	}
	if err := kubeletsim.WriteAtomic(dir, payload); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Load(ctx); err == nil || !strings.Contains(err.Error(), string(planstore.ReasonStaleGeneration)) {
		t.Fatalf("generation %d replayed at %d: %v, want %s", pair.Generation, next.Generation, err, planstore.ReasonStaleGeneration)
	}
	// ... and in the ConfigMap, which the manager puts back.
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&published), &cm); err != nil {
		t.Fatal(err)
	}
	current := maps.Clone(cm.Data)
	cm.Data = gen1
	if err := k8s.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the manager repairs the replayed index", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&published), &cm); err != nil {
			return err
		}
		if !maps.Equal(cm.Data, current) {
			return fmt.Errorf("index ConfigMap still holds generation %d's signature", pair.Generation)
		}
		return nil
	})
}
