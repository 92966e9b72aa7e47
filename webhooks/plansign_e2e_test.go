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
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// podVolumes are one pod's volumes on disk, as its kubelet keeps them.
type podVolumes struct {
	pod  *corev1.Pod
	dirs map[string]string
}

func newPodVolumes(t *testing.T, pod *corev1.Pod) *podVolumes {
	t.Helper()
	root := t.TempDir()
	v := &podVolumes{pod: pod, dirs: map[string]string{
		pdv1.AgentPlansVolume:   filepath.Join(root, "plans"),
		pdv1.AgentSocketsVolume: filepath.Join(root, "sockets"),
	}}
	if err := os.Mkdir(v.dirs[pdv1.AgentSocketsVolume], 0o777); err != nil {
		t.Fatal(err)
	}
	return v
}

// sync is the kubelet's periodic sync of the plans volume.
func (v *podVolumes) sync(t *testing.T) {
	t.Helper()
	for _, name := range []string{pdv1.AgentPlansVolume} {
		if err := kubeletsim.MaterialiseVolume(context.Background(), k8s, v.pod, name, v.dirs[name]); err != nil {
			t.Fatal(err)
		}
	}
}

// agentView is what an agent's /v1/agent says.
type agentView struct {
	PlanHash  string `json:"planHash"`
	Ready     bool   `json:"ready"`
	PlanError string `json:"planError"`
	Ranks     []int  `json:"ranks"`
	// PrefillLayoutsMet: the prefill layouts the agent holds instances of.
	PrefillLayoutsMet []struct {
		Layout    string `json:"layout"`
		Instances int    `json:"instances"`
	} `json:"prefillLayoutsMet"`
}

func (a *agentProcess) view() (agentView, error) {
	var v agentView
	resp, err := http.Get(a.probe + pdv1.AgentInfoPath)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// waitView waits until the agent's /v1/agent passes check.
func (a *agentProcess) waitView(t *testing.T, what string, check func(agentView) error) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, what, func() error {
		v, err := a.view()
		if err != nil {
			return err
		}
		return check(v)
	})
}

// keeps: the agent is ready on plan hash and says why it refused the rest.
func keeps(hash string, reason planstore.Reason) func(agentView) error {
	return func(v agentView) error {
		if v.PlanHash != hash || !v.Ready || !strings.Contains(v.PlanError, string(reason)) {
			return fmt.Errorf("/v1/agent: %+v", v)
		}
		return nil
	}
}

// Plans the operator did not sign are never loaded, end to end with the
// built agent run from admitted pods' own command lines:
//
//  1. a running agent whose volume shows plans the operator did not publish
//     (the kubelet synced while someone else's ConfigMaps stood under the
//     plan names) keeps its plan, says SealMismatch (the index is not the
//     one the signature beside it names), and completes rooms;
//  2. with the pair's plans withdrawn (an incompatible spec) and someone
//     else's ConfigMaps under the index and shard names, the running agent
//     keeps its plan (MissingSignature), and an agent starting next to them
//     stays unready and opens no room: nothing reaches the prefill ranks;
//  3. the spec fixed, the operator refuses to write over those ConfigMaps
//     (ConfigMapConflict, named), and signs nothing new; once they are
//     deleted it publishes, signs, and both agents run the plan.
func TestAgentLoadsOnlySignedPlans(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	pair := readyPair(t, ns, key.Name)
	published := pair.Status.Plan.Hash
	forged, forgedHash := forgedPublication(t, pair)
	running := newPodVolumes(t, admit(t, fixtures.DecodePod(ns, "decode-0", key.Name).Obj()))
	later := newPodVolumes(t, admit(t, fixtures.DecodePod(ns, "decode-1", key.Name).Obj()))
	running.sync(t)
	a := runAgentContainer(t, running.pod, loopbackPodIP(), running.dirs)
	a.waitPlan(t, published)

	// 1. The forged index and rank files where the kubelet projects plans.
	payload, _, err := kubeletsim.VolumePayload(ctx, k8s, running.pod, pdv1.AgentPlansVolume)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range forged {
		for k, v := range o.Data {
			payload[k] = []byte(v)
		}
		for k, v := range o.BinaryData {
			payload[k] = v
		}
	}
	if err := kubeletsim.WriteAtomic(running.dirs[pdv1.AgentPlansVolume], payload); err != nil {
		t.Fatal(err)
	}
	a.waitView(t, "the running agent keeps its plan and refuses the forged one", keeps(published, planstore.ReasonSealMismatch))
	peer := startPeerFor(t, pair)
	completeRooms(t, a, peer, []int{0, 1, 2, 3}, pair, 201)
	running.sync(t)
	a.waitView(t, "the agent runs the operator's files again, with no error", func(v agentView) error {
		if v.PlanHash != published || !v.Ready || v.PlanError != "" {
			return fmt.Errorf("/v1/agent: %+v", v)
		}
		return nil
	})

	// 2. Withdrawn, and someone else's ConfigMaps under the plan names.
	good := pair.Spec
	withdrawn := changeSpecTo(t, key, fixtures.IncompatiblePair(ns, key.Name).Spec, pdv1.PDPairPlansPublished, metav1.ConditionFalse)
	testutil.Eventually(t, settle, "the operator's ConfigMaps withdrawn", func() error {
		for _, name := range []string{"llama-plans", "llama-plans-0"} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}); err == nil {
				return fmt.Errorf("%s is still there", name)
			}
		}
		return nil
	})
	for _, cm := range []*corev1.ConfigMap{foreign(ns, "llama-plans", forged[0]), foreign(ns, "llama-plans-0", forged[1:]...)} {
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	running.sync(t)
	a.waitView(t, "the running agent keeps its plan while nothing is signed", keeps(published, planstore.ReasonMissingSignature))
	later.sync(t)
	bIP := loopbackPodIP()
	b := runAgentContainer(t, later.pod, bIP, later.dirs)
	b.waitView(t, "an agent starting next to someone else's plans stays unready", func(v agentView) error {
		if v.PlanHash != "" || v.Ready || !strings.Contains(v.PlanError, string(planstore.ReasonMissingSignature)) {
			return fmt.Errorf("/v1/agent: %+v (generation %d)", v, withdrawn.Generation)
		}
		return nil
	})
	forgedLayout, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	c := agentclient.New(filepath.Join(b.socketDir, "rank-0.sock"), agentclient.Options{})
	defer c.Close()
	openCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = c.RegisterEngine(openCtx, receivertest.Engine(receivertest.Snapshot(t, forgedLayout, 0), 0))
	if _, err := c.Open(openCtx, peer.BootstrapAddr(), 202); err == nil {
		t.Fatal("the unready agent opened a room")
	}
	for _, rank := range peer.Ranks() {
		for _, reg := range rank.Registrations() {
			if reg.DecodeIP == bIP {
				t.Fatalf("a prefill rank got a registration from the unready agent: %+v", reg)
			}
		}
		for _, req := range rank.Requests() {
			if req.DecodeIP == bIP || req.Room == 202 {
				t.Fatalf("a prefill rank got a request from the unready agent: %+v", req)
			}
		}
	}
	if v, _ := b.view(); v.PlanHash == forgedHash {
		t.Fatal("the starting agent loaded the forged plans")
	}

	// 3. Fixed: the operator will not write over them, and signs nothing.
	changeSpecTo(t, key, good, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue)
	conflict := testutil.WaitCondition(t, k8s, settle, key, pdv1.PDPairPlansPublished, metav1.ConditionFalse)
	for _, c := range conflict.Status.Conditions {
		if c.Type == string(pdv1.PDPairPlansPublished) && (c.Reason != string(pdv1.ReasonConfigMapConflict) || !strings.Contains(c.Message, "llama-plans")) {
			t.Fatalf("PlansPublished %s: %s, want ConfigMapConflict naming the ConfigMap", c.Reason, c.Message)
		}
	}
	later.sync(t)
	if v, _ := b.view(); v.Ready {
		t.Fatalf("the starting agent became ready on someone else's plans: %+v", v)
	}
	for _, name := range []string{"llama-plans", "llama-plans-0"} {
		if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitCondition(t, k8s, settle, key, pdv1.PDPairReady, metav1.ConditionTrue)
	running.sync(t)
	later.sync(t)
	b.waitPlan(t, published)
	a.waitView(t, "the running agent is current, with no error", func(v agentView) error {
		if v.PlanHash != published || v.PlanError != "" {
			return fmt.Errorf("/v1/agent: %+v", v)
		}
		return nil
	})
}

// changeSpecTo replaces the pair's spec and waits for its condition.
func changeSpecTo(t *testing.T, key client.ObjectKey, spec pdv1.PDPairSpec, cond pdv1.PDPairConditionType, status metav1.ConditionStatus) *pdv1.PDPair {
	t.Helper()
	var p pdv1.PDPair
	// The manager writes the status meanwhile (decode pods appearing change
	// status.generations' counts): read again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), key, &p); err != nil {
			return err
		}
		p.Spec = spec
		return k8s.Update(context.Background(), &p)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got *pdv1.PDPair
	testutil.Eventually(t, settle, fmt.Sprintf("%s=%s for generation %d", cond, status, p.Generation), func() error {
		got = testutil.WaitCondition(t, k8s, settle, key, cond, status)
		if got.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("observed generation %d", got.Status.ObservedGeneration)
		}
		return nil
	})
	return got
}
