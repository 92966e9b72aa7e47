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

package localcp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// rolloutSettle bounds each wait for the manager or an agent.
const rolloutSettle = 60 * time.Second

// stepA: the pair at P8 × D4, one decode pod admitted by the webhook, its
// agent run as the kubelet runs it, rooms from a P8 prefill.
func (r *rollout) stepA(ctx context.Context) error {
	r.printf("\n== a. one layout pair: %s (prefill TP 8 × decode TP 4), one decode pod\n", r.o.PairFile)
	applied, err := applyFile(ctx, r.s.Client(), r.o.PairFile)
	if err != nil {
		return err
	}
	if len(applied) != 1 || applied[0].Kind != "PDPair" {
		return fmt.Errorf("%s must hold exactly one PDPair, it holds %v", r.o.PairFile, applied)
	}
	r.key = client.ObjectKey{Namespace: applied[0].Namespace, Name: applied[0].Name}
	if err := waitPairReady(ctx, r.s.Client(), r.key, rolloutSettle); err != nil {
		return err
	}
	p, err := waitPair(ctx, r.s.Client(), r.key, "one generation", wantGenerations("P8×D4 current"))
	if err != nil {
		return err
	}
	if r.old, err = r.startDecode(ctx, "", 4, 0); err != nil {
		return err
	}
	peer8, err := r.startPeer(ctx, p, 8, 4)
	if err != nil {
		return err
	}
	r.old.driver.add(peer8)
	if err := r.waitRooms(ctx, r.old, peer8); err != nil {
		return err
	}
	return r.snapshot(ctx, "a")
}

// stepB: the pair edited in place to prefill TP 4; a P4 prefill beside the
// P8 one, rooms to both; a P2 prefill, a layout never described, refused.
func (r *rollout) stepB(ctx context.Context) error {
	r.printf("\n== b. prefill rollout: the pair edited to prefill TP 4 while the P8 prefill serves\n")
	if err := r.edit(ctx, "prefill", 4); err != nil {
		return err
	}
	p, err := waitPair(ctx, r.s.Client(), r.key, "P4×D4 current, P8×D4 kept", wantGenerations("P4×D4 current", "P8×D4"))
	if err != nil {
		return err
	}
	// The old pod's agent loads the new publication (both generations'
	// plan sets) at its next kubelet sync; its /v1/agent then names the
	// current generation's hash, status.plan.hash.
	if err := r.waitAgent(ctx, r.old, p.Status.Plan.Hash); err != nil {
		return err
	}
	peer4, err := r.startPeer(ctx, p, 4, 4)
	if err != nil {
		return err
	}
	peer2, err := r.startPeer(ctx, p, 2, 4)
	if err != nil {
		return err
	}
	peer2.Refusal, peer2.Limit = "LayoutMismatch", 3
	peer2.RefusalSays = []string{"prefill TP 4", "prefill TP 8", "prefill_tp_size is 2"}
	r.old.driver.add(peer4)
	r.old.driver.add(peer2)
	if err := r.waitRooms(ctx, r.old, peer4, peer2, r.target(r.old, "P8")); err != nil {
		return err
	}
	if err := r.untouched("P2×D4"); err != nil {
		return err
	}
	return r.snapshot(ctx, "b")
}

// stepC: the pair edited to decode TP 2; a pod of the new template beside
// the old one; rooms from both prefills to both pods.
func (r *rollout) stepC(ctx context.Context) error {
	r.printf("\n== c. decode rollout: the pair edited to decode TP 2; a new pod (TP 2) beside the old (TP 4)\n")
	if err := r.edit(ctx, "decode", 2); err != nil {
		return err
	}
	p, err := waitPair(ctx, r.s.Client(), r.key, "P4×D2 current, the D4 generations kept",
		wantGenerations("P4×D2 current", "P4×D4", "P8×D4"))
	if err != nil {
		return err
	}
	if err := waitPairReady(ctx, r.s.Client(), r.key, rolloutSettle); err != nil {
		return err
	}
	if r.neu, err = r.startDecode(ctx, "-tp2", 2, 1); err != nil {
		return err
	}
	// The old pod keeps the decode layout it was admitted under: after a
	// kubelet sync its agent runs its own generation's set, not the
	// spec's; restarted mid-rollout (a container restart), it loads that
	// set again and serves.
	time.Sleep(KubeletSync + KubeletSync/2)
	if err := r.waitAgent(ctx, r.old, generationHash(p, 4, 4)); err != nil {
		return err
	}
	r.old.driver.stop()
	if err := r.old.agent.restart(ctx, r.s.Client(), r.o.Options); err != nil {
		return fmt.Errorf("restarting the agent of %s: %w", r.old.agent.Pod.Name, err)
	}
	r.printf("agent of %s restarted, as the kubelet restarts a container (log %s/%s)\n", r.old.agent.Pod.Name, r.o.LogDir, r.old.agent.Log)
	if err := r.waitAgent(ctx, r.old, generationHash(p, 4, 4)); err != nil {
		return err
	}
	r.old.driver.start()
	peer4, err := r.startPeer(ctx, p, 4, 2)
	if err != nil {
		return err
	}
	peer8, err := r.startPeer(ctx, p, 8, 2)
	if err != nil {
		return err
	}
	r.neu.driver.add(peer4)
	r.neu.driver.add(peer8)
	if err := r.waitRooms(ctx, r.neu, peer4, peer8); err != nil {
		return err
	}
	if err := r.waitRooms(ctx, r.old, r.target(r.old, "P8"), r.target(r.old, "P4")); err != nil {
		return err
	}
	return r.snapshot(ctx, "c")
}

// stepD: the old pod and the P8 prefills gone; the old generations stay
// listed for their grace (5 minutes, not waited for here).
func (r *rollout) stepD(ctx context.Context) error {
	r.printf("\n== d. the old pod and the P8 prefills stopped: the old generations drain\n")
	r.old.driver.stop()
	if err := r.old.agent.stop(r.o.StopTimeout); err != nil {
		return err
	}
	if err := r.s.Client().Delete(ctx, r.old.agent.Pod); err != nil {
		return fmt.Errorf("deleting the old pod: %w", err)
	}
	peer8 := r.target(r.neu, "P8")
	r.neu.driver.remove(peer8)
	for _, label := range []string{"P8×D4", "P8×D2"} {
		if err := r.byLabel[label].Stop(r.o.StopTimeout); err != nil {
			return err
		}
	}
	r.printf("deleted pod %s, stopped its agent and the P8 prefill peers\n", r.old.agent.Pod.Name)
	if _, err := waitPair(ctx, r.s.Client(), r.key, "the old generations unused, in their grace", drained); err != nil {
		return err
	}
	if err := r.waitRooms(ctx, r.neu, r.target(r.neu, "P4")); err != nil {
		return err
	}
	return r.snapshot(ctx, "d")
}

// drained: every older generation is still listed (its grace has not
// ended), no decode pod or agent of the old decode layout left. The
// generations' messages say what keeps each (an agent may still hold a
// P8 instance it met: prefill instances are known only from rooms).
func drained(p *pdv1.PDPair) error {
	if len(p.Status.Generations) < 2 {
		return fmt.Errorf("status.generations %q: the old generations are gone before their grace", GenerationNames(p))
	}
	for _, g := range p.Status.Generations {
		if !g.Current && (g.DecodePods != 0 || g.Agents != 0) {
			return fmt.Errorf("generation %s: decodePods %d, agents %d: %q", generationName(g), g.DecodePods, g.Agents, g.Message)
		}
	}
	return nil
}

// untouched stops the peer of label and checks from what it printed on
// its way out that no decode rank registered with or sent a request to
// any of its ranks: nothing may reach a prefill of a layout never
// described.
func (r *rollout) untouched(label string) error {
	p := r.byLabel[label]
	if err := p.Stop(r.o.StopTimeout); err != nil {
		return err
	}
	out, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err
	}
	ranks := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "engine rank ") || !strings.Contains(line, "registrations") {
			continue
		}
		ranks++
		if !strings.Contains(line, ": 0 registrations, 0 requests") {
			return fmt.Errorf("prefill %s was reached, as its log %s says: %s", label, p.LogPath, line)
		}
	}
	if ranks == 0 {
		return fmt.Errorf("prefill %s printed no counts on stopping (log %s)", label, p.LogPath)
	}
	r.printf("prefill %s stopped: none of its %d ranks was registered with or sent a request\n", label, ranks)
	return nil
}
