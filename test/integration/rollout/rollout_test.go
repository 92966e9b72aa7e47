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

package rollout

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

const (
	namespace        = "rollout"
	managerNamespace = "pdtopo-system"
)

// The user edits the pair from prefill TP 8 to TP 4 and nothing else: the
// manager publishes both plan sets, signed; decode agents that load the
// projected ConfigMaps with the manager's public key serve rooms to a P8
// and a P4 prefill at once, every byte where the peers expect it, report
// the current set's hash, and refuse a P2 prefill naming both layouts.
func TestPrefillRolloutThroughTheManager(t *testing.T) {
	env := testutil.StartForTest(t)
	user, kubeconfig := testutil.AdminUser(t, env, "rollout-admin")
	k8s, err := client.New(user.Config(), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CreateNamespaces(t, k8s, namespace, managerNamespace)
	testutil.StartManager(t, env.Root, kubeconfig, "--signing-key-namespace="+managerNamespace)

	// the layouts the prefill peers serve, and the same as PDPair specs
	p8, p4, p2 := fixtures.FragmentedP8D4(), fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128)), fixtures.MHA(2, 4, fixtures.Buffers(2, 512, 256, 128))
	pair := fixtures.Pair(namespace, "llm").Prefill(8, 1).Decode(4, 1).KVPair(2, 256, 128, 128).Obj()
	if err := k8s.Create(context.Background(), pair); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(pair)
	old := testutil.WaitPair(t, k8s, time.Minute, key, func(p *pdv1.PDPair) bool { return p.Status.Plan != nil && p.Status.ObservedGeneration == p.Generation })
	edit := fixtures.Pair(namespace, "llm").Prefill(4, 1).Decode(4, 1).KVPair(2, 256, 256, 128).Obj()
	old.Spec = edit.Spec
	if err := k8s.Update(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	cur := testutil.WaitPair(t, k8s, time.Minute, key, func(p *pdv1.PDPair) bool {
		return p.Status.ObservedGeneration == p.Generation && p.Status.Plan != nil && p.Status.Plan.Hash != old.Status.Plan.Hash
	})

	keys := publicKeys(t, k8s)
	dir := t.TempDir()
	var plans plansource.Plans
	testutil.Eventually(t, time.Minute, "both sets published and signed", func() error {
		receivertest.ProjectPlans(t, dir, int(time.Now().UnixNano()), planObjects(t, k8s))
		plans, err = plansource.Dir{Path: dir, EngineRanks: []int{0, 1, 2, 3}, Signed: plansource.NewSigned(keys, namespace, "llm", 0)}.Load(context.Background())
		switch {
		case err != nil:
			return err
		case len(plans.Alternates) != 1 || plans.Hash != cur.Status.Plan.Hash || plans.Alternates[0][0].Hash != old.Status.Plan.Hash:
			return fmt.Errorf("loaded %s and %d earlier sets", plans.Hash, len(plans.Alternates))
		}
		return nil
	})

	agents := make([]*receiver.Manager, 4)
	for r := range agents {
		agents[r], _ = receivertest.StartAgent(t, &plans.Ranks[r], r, nil)
	}
	if err := receiver.InstallPlanSets(agents, plans.Sets()); err != nil {
		t.Fatal(err)
	}
	for r, m := range agents {
		if err := m.RegisterEngine(receivertest.Engine(plans.Ranks[r], r)); err != nil {
			t.Fatal(err)
		}
	}
	for room, l := range map[int64]planv1.Layout{8: p8, 4: p4} {
		peer := receivertest.StartPeer(t, l, func(c *prefillpeer.Config) { c.Logf = t.Logf })
		peer.Script(room, prefillpeer.Success(room))
		for r, m := range agents {
			receivertest.OpenAndRequest(t, m, peer.BootstrapAddr(), room, receivertest.Request)
			st := receivertest.WaitStatus(t, m, room, func(p receiver.TransferPoll) bool { return p.Finished() })
			if st.Status != receiver.Success || st.BootstrapToken != room {
				t.Fatalf("decode rank %d, prefill TP %d: %s %+v", r, room, st.Status, st.Failure)
			}
			if got, want := peer.TransferredBytes(room, receivertest.Engine(plans.Ranks[r], r).SessionID), int64(3*4*256); got != want {
				t.Errorf("decode rank %d, prefill TP %d: %d bytes written, want %d", r, room, got, want)
			}
			if m.PlanHash() != cur.Status.Plan.Hash {
				t.Errorf("decode rank %d reports plan hash %s, not status.plan.hash", r, m.PlanHash())
			}
		}
	}
	never := receivertest.StartPeer(t, p2, nil)
	if err := agents[0].Open(never.BootstrapAddr(), 2); err != nil {
		t.Fatal(err)
	}
	st := receivertest.WaitStatus(t, agents[0], 2, func(p receiver.TransferPoll) bool { return p.Finished() })
	if st.Status != receiver.Failed || st.Failure.Reason != receiver.ReasonLayoutMismatch || !strings.Contains(st.Failure.Message, "(prefill TP 4, prefill TP 8)") {
		t.Fatalf("a P2 prefill: %s %+v, want LayoutMismatch naming the layouts served", st.Status, st.Failure)
	}
}

// publicKeys are the manager's plan signing keys, from its Secret.
func publicKeys(t *testing.T, k8s client.Client) planstore.PublicKeys {
	t.Helper()
	var s corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: managerNamespace, Name: "pdtopo-plan-signing-key"}, &s); err != nil {
		t.Fatal(err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(s.Data["ed25519.seed"])))
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("the signing key Secret holds no base64 ed25519 seed: %v", err)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	keys, err := planstore.ParsePublicKeys(planstore.EncodePublicKey(pub))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// planObjects are the pair's plan ConfigMaps as planstore objects.
func planObjects(t *testing.T, k8s client.Client) []planstore.Object {
	t.Helper()
	var list corev1.ConfigMapList
	if err := k8s.List(context.Background(), &list, client.InNamespace(namespace), client.MatchingLabels{pdv1.LabelPDPair: "llm"}); err != nil {
		t.Fatal(err)
	}
	var out []planstore.Object
	for _, cm := range list.Items {
		out = append(out, planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData})
	}
	return out
}
