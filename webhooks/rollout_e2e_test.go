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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A rollout of each role under traffic, end to end: decode pods admitted
// by the webhook, their agents run from the admitted command lines with
// the kubelet's volumes, prefill peers on real ZMQ checking every byte.
//
//	a. P8 → D4: the pod's agent serves rooms from a P8 prefill.
//	b. the pair edited to prefill TP 4: a P4 peer starts beside the still
//	   running P8; rooms to both succeed (the agent picks a set per
//	   room), a P2 peer the pair never described is refused
//	   (LayoutMismatch naming the layouts served); status lists both
//	   generations and RolloutCompatible is True.
//	c. the pair edited to decode TP 2: a new pod (TP 2) beside the old
//	   (TP 4), both serving; the new pod also serves the still running P8
//	   prefill (the cross pair P8 × D2, never any generation's, planned
//	   for it) and the old pod still serves it too; the old pod's agent
//	   restarted mid-rollout loads its generation's plans and serves again.
//	d. the old pod and the P8 prefill gone, past the grace the old
//	   generations are dropped and only the current set is published.
func TestRolloutEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	clock := phaseClock(t)

	// a. one layout pair, one decode pod.
	p8d4 := readyPair(t, ns, key.Name)
	old := startDecode(t, ns, "decode-old", key.Name, "tp=4,dp=1", 4)
	old.agent.waitRanks(t, p8d4.Status.Plan.Hash, 4)
	old.running(t)
	peer8 := startPeerFor(t, p8d4)
	completeRooms(t, old.agent, peer8, old.ranks, p8d4, 101)
	clock("a. P8 × D4 serving")

	// b. prefill rollout: P8 and P4 prefills serve at once.
	p4d4 := changeSpec(t, key, fixtures.GQAPair(ns, key.Name, 4, 4, 4, 512).Spec)
	st := waitGenerations(t, key, "P4 × D4 current, P8 × D4 kept", func(p *pdv1.PDPair) error {
		return wantGenerations(p, []string{"tp=4 tp=4 current", "tp=8 tp=4"}, metav1.ConditionTrue)
	})
	old.vols.sync(t)
	old.agent.waitRanks(t, st.Status.Plan.Hash, 4) // /v1/agent's planHash is status.plan.hash
	peer4 := startPeerFor(t, p4d4)
	for room := int64(110); room < 116; room += 2 { // alternating: the agent picks per room
		completeRooms(t, old.agent, peer4, old.ranks, p4d4, room)
		completeRooms(t, old.agent, peer8, old.ranks, p8d4, room+1)
	}
	wantTargetsPerRank(t, peer4, old.ranks, 1)
	p2 := startPeerFor(t, fixtures.GQAPair(ns, key.Name, 2, 4, 4, 512))
	refusedRoom(t, old.agent, p2, old.ranks[0], p4d4, 104, "LayoutMismatch", "prefill TP 4", "prefill TP 8", "prefill_tp_size is 2")
	for _, r := range p2.Ranks() {
		if c := r.Counts(); c.Registrations != 0 || c.Requests != 0 {
			t.Fatalf("the TP 2 prefill's rank %d got %+v: nothing may reach a layout never described", r.EngineRank, c)
		}
	}
	clock("b. prefill rollout")

	// c. decode rollout: an old TP 4 pod and a new TP 2 pod side by side
	// against the current P4 prefill (one peer per decode layout: a peer
	// checks the bytes for the decode layout it was made for).
	p4d2 := changeSpec(t, key, fixtures.GQAPair(ns, key.Name, 4, 2, 4, 1024).Spec)
	st = waitGenerations(t, key, "P4 × D2 current, D4 generations kept", func(p *pdv1.PDPair) error {
		return wantGenerations(p, []string{"tp=4 tp=2 current", "tp=4 tp=4", "tp=8 tp=4"}, metav1.ConditionTrue)
	})
	oldHash := generationHash(t, st, 4, 4)
	neu := startDecode(t, ns, "decode-new", key.Name, "tp=2,dp=1", 2)
	neu.agent.waitRanks(t, st.Status.Plan.Hash, 2)
	neu.running(t)
	peer4d2 := startPeerFor(t, p4d2)
	completeRooms(t, neu.agent, peer4d2, neu.ranks, p4d2, 201)
	// the P8 prefill still runs: the new pod meets it through the cross
	// pair's plans, checked by a P8 peer made for the TP 2 decode layout
	p8d2 := fixtures.GQAPair(ns, key.Name, 8, 2, 4, 1024)
	peer8d2 := startPeerFor(t, p8d2)
	for room := int64(205); room < 209; room += 2 {
		completeRooms(t, neu.agent, peer8d2, neu.ranks, p8d2, room)
		completeRooms(t, neu.agent, peer4d2, neu.ranks, p4d2, room+1)
	}
	peer8d2.Close() // gone before d., which waits for the agent to let it go
	old.vols.sync(t)
	old.agent.waitRanks(t, oldHash, 4) // the old pod keeps its own decode layout's set
	completeRooms(t, old.agent, peer4, old.ranks, p4d4, 202)
	completeRooms(t, old.agent, peer8, old.ranks, p8d4, 209)

	old.restart(t)
	old.agent.waitRanks(t, oldHash, 4)
	completeRooms(t, old.agent, peer4, old.ranks, p4d4, 203)
	clock("c. decode rollout, old agent restarted")

	// d. the old pod and the P8 prefill gone: past the grace only the
	// current generation is left, and its set alone is published. The new
	// pod's agent drops the closed P8 prefill once its heartbeats fail;
	// the old pod's deletion then reconciles the pair (nothing would when
	// the agent lets it go).
	neu.agent.waitView(t, "the new pod's agent holds no P8 prefill", func(v agentView) error {
		for _, m := range v.PrefillLayoutsMet {
			if m.Layout == "tp=8,dp=1" {
				return fmt.Errorf("/v1/agent: %+v", v)
			}
		}
		return nil
	})
	old.stop(t)
	if err := k8s.Delete(context.Background(), old.vols.pod); err != nil {
		t.Fatal(err)
	}
	peer8.Close()
	waitGenerations(t, key, "the old generations in their grace", func(p *pdv1.PDPair) error {
		for _, g := range p.Status.Generations {
			if !g.Current && (g.DecodePods != 0 || g.Agents != 0 || !strings.Contains(g.Message, "nothing seen using it")) {
				return fmt.Errorf("generation %v × %v: %d pods, %d agents: %s", g.Prefill.TensorParallelSize, g.Decode.TensorParallelSize, g.DecodePods, g.Agents, g.Message)
			}
		}
		return nil
	})
	rolloutClock.advance(controllers.GenerationGrace + time.Minute)
	t.Cleanup(func() { rolloutClock.advance(-(controllers.GenerationGrace + time.Minute)) })
	// The requeue at the grace's end is in real time: a pod appearing
	// (another replica of the new template) reconciles the pair now.
	admit(t, fixtures.DecodePod(ns, "decode-new-1", key.Name).Obj())
	st = waitGenerations(t, key, "the current generation alone", func(p *pdv1.PDPair) error {
		return wantGenerations(p, []string{"tp=4 tp=2 current"}, metav1.ConditionTrue)
	})
	testutil.Eventually(t, settle, "plansets.json withdrawn", func() error {
		var cm corev1.ConfigMap
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: planstore.IndexConfigMapName(key.Name)}, &cm); err != nil {
			return err
		}
		if _, ok := cm.Data[planstore.SetsKey]; ok {
			return fmt.Errorf("%s still holds %s", cm.Name, planstore.SetsKey)
		}
		return nil
	})
	neu.vols.sync(t)
	neu.agent.waitRanks(t, st.Status.Plan.Hash, 2)
	completeRooms(t, neu.agent, peer4d2, neu.ranks, p4d2, 204)
	clock("d. old generations dropped")
}

// decodeRun is one admitted decode pod with its volumes and running agent.
type decodeRun struct {
	vols  *podVolumes
	ip    string
	ranks []int
	agent *agentProcess
}

// startDecode admits a decode pod, checks the layout it was admitted under
// reaches its agent's command line, and runs the agent.
func startDecode(t *testing.T, ns, name, pair, layout string, ranks int) *decodeRun {
	t.Helper()
	pod := admit(t, fixtures.DecodePod(ns, name, pair).Obj())
	if got := pod.Annotations[pdv1.AnnotationDecodeLayout]; got != layout {
		t.Fatalf("pod %s admitted under decode layout %q, want %q", name, got, layout)
	}
	if c := fixtures.AgentContainer(pod); c == nil || !slices.Contains(c.Args, "--decode-layout="+layout) {
		t.Fatalf("pod %s's agent is not told its decode layout %s: %v", name, layout, c)
	}
	d := &decodeRun{vols: newPodVolumes(t, pod), ip: loopbackPodIP()}
	for r := range ranks {
		d.ranks = append(d.ranks, r)
	}
	d.vols.sync(t)
	d.agent = runAgentContainer(t, pod, d.ip, d.vols.dirs)
	return d
}

// running writes the pod's status as its kubelet would once the agent is
// ready, so the operator's fleet probes reach the agent.
func (d *decodeRun) running(t *testing.T) {
	t.Helper()
	pod := d.vols.pod
	pod.Status = fixtures.RunningStatus(true)
	pod.Status.PodIP, pod.Status.PodIPs = d.ip, []corev1.PodIP{{IP: d.ip}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// stop ends the agent's process, as the kubelet does when the container
// is restarted, and waits until it has exited (its probe port is free).
func (d *decodeRun) stop(t *testing.T) {
	t.Helper()
	p := d.agent.cmd.Process
	if err := p.Signal(stopSignal); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

// restart stops the agent and starts the container again from the same
// admitted pod, with a kubelet sync between.
func (d *decodeRun) restart(t *testing.T) {
	t.Helper()
	d.stop(t)
	d.vols.sync(t)
	d.agent = runAgentContainer(t, d.vols.pod, d.ip, d.vols.dirs)
}

// waitRanks waits until the agent reports the plan, ready, on ranks ranks.
func (a *agentProcess) waitRanks(t *testing.T, hash string, ranks int) {
	t.Helper()
	a.waitView(t, fmt.Sprintf("the agent runs plan %.12s on %d ranks", hash, ranks), func(v agentView) error {
		if v.PlanHash != hash || !v.Ready || len(v.Ranks) != ranks {
			return fmt.Errorf("/v1/agent: %+v", v)
		}
		return nil
	})
}

// waitGenerations polls the pair until check passes.
func waitGenerations(t *testing.T, key client.ObjectKey, what string, check func(*pdv1.PDPair) error) *pdv1.PDPair {
	t.Helper()
	var p pdv1.PDPair
	testutil.Eventually(t, settle, what, func() error {
		if err := k8s.Get(context.Background(), key, &p); err != nil {
			return err
		}
		return check(&p)
	})
	return &p
}

// wantGenerations: status.generations are want ("prefillTP decodeTP
// [current]", in order) and RolloutCompatible is rollout, each older one
// with its own plan hash.
func wantGenerations(p *pdv1.PDPair, want []string, rollout metav1.ConditionStatus) error {
	var got []string
	for _, g := range p.Status.Generations {
		s := fmt.Sprintf("tp=%d tp=%d", g.Prefill.TensorParallelSize, g.Decode.TensorParallelSize)
		if g.Current {
			s += " current"
			if p.Status.Plan == nil || g.PlanHash != p.Status.Plan.Hash {
				return fmt.Errorf("the current generation's plan hash %q is not status.plan.hash", g.PlanHash)
			}
		}
		if g.PlanHash == "" {
			return fmt.Errorf("generation %s has no plan hash", s)
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("generations %q, want %q", got, want)
	}
	c := findCondition(p, pdv1.PDPairRolloutCompatible)
	if c.Status != rollout {
		return fmt.Errorf("RolloutCompatible %s/%s: %s, want %s", c.Status, c.Reason, c.Message, rollout)
	}
	return nil
}

// generationHash is the plan hash of the generation of those TP sizes.
func generationHash(t *testing.T, p *pdv1.PDPair, prefillTP, decodeTP int32) string {
	t.Helper()
	for _, g := range p.Status.Generations {
		if g.Prefill.TensorParallelSize == prefillTP && g.Decode.TensorParallelSize == decodeTP {
			return g.PlanHash
		}
	}
	t.Fatalf("no generation prefill TP %d × decode TP %d in %+v", prefillTP, decodeTP, p.Status.Generations)
	return ""
}

// phaseClock logs the time each phase took.
func phaseClock(t *testing.T) func(string) {
	last := time.Now()
	return func(phase string) {
		now := time.Now()
		t.Logf("%s: %s", phase, now.Sub(last).Round(10*time.Millisecond))
		last = now
	}
}

// stopSignal is what the kubelet sends a container it stops.
const stopSignal = syscall.SIGTERM

// refusedRoom opens a room on one engine rank to peer and wants it failed
// with code, its message saying each of says.
func refusedRoom(t *testing.T, a *agentProcess, peer *prefillpeer.Peer, rank int, pair *pdv1.PDPair, room int64, code string, says ...string) {
	t.Helper()
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := agentclient.New(filepath.Join(a.socketDir, "rank-"+strconv.Itoa(rank)+".sock"), agentclient.Options{})
	defer c.Close()
	if err := c.RegisterEngine(ctx, receivertest.Engine(receivertest.Snapshot(t, l, rank), rank)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(ctx, peer.BootstrapAddr(), room); err != nil {
		t.Fatal(err)
	}
	got, err := c.Wait(ctx, room, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != receiver.Failed || got.FailureCode != code {
		t.Fatalf("room %d: %+v, want Failed %s", room, got, code)
	}
	for _, s := range says {
		if !strings.Contains(got.FailureMessage, s) {
			t.Fatalf("room %d's refusal %q does not say %q", room, got.FailureMessage, s)
		}
	}
}
