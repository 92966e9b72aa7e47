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
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// The decode fleet's probes run in the background, as the live contract
// reads do: a reconcile reports what the agents last answered and starts
// the probes that are due; a probe whose answer differs from the last one
// enqueues the pair. So a few decode pods that accept connections and never
// answer hold a probe slot for its timeout, never a reconcile worker. Slots
// are shared between namespaces (fairslots.go).

const (
	// fleetProbeSlots bounds the agents asked at once over all pairs.
	fleetProbeSlots = 16
	// fleetProbeQueue bounds the probes one namespace may have waiting.
	fleetProbeQueue = 1024
	// fleetProbeFresh: an answer this recent is not asked again; the
	// reconcile its arrival causes reads it without probing again.
	fleetProbeFresh = 250 * time.Millisecond
)

// errNotAskedYet: the pod's agent has not answered a probe yet (its first
// one is queued or in flight).
var errNotAskedYet = errors.New("the agent has not been asked yet (its first probe is under way)")

// podProbe is what one decode pod's agent last answered.
type podProbe struct {
	uid  types.UID
	addr string
	// result is the last answer; have is false before the first.
	result probeResult
	have   bool
	at     time.Time
	// cancel ends the probe in flight (nil when none).
	cancel context.CancelFunc
}

// fleetProbes holds the last answer of every decode pod's agent, by pair.
type fleetProbes struct {
	prober *agentProber
	slots  *fairSlots
	// events enqueue a pair one of whose agents answered differently.
	events chan event.GenericEvent
	now    func() time.Time

	mu   sync.Mutex
	pods map[types.NamespacedName]map[string]*podProbe
}

func newFleetProbes(prober *agentProber) *fleetProbes {
	return &fleetProbes{prober: prober, slots: newFairSlots(fleetProbeSlots, fleetProbeQueue),
		events: make(chan event.GenericEvent, 64), now: time.Now, pods: map[types.NamespacedName]map[string]*podProbe{}}
}

// observe returns the last answer of each reachable pod's agent (or
// errNotAskedYet) and starts a probe of every one not asked within
// fleetProbeFresh. Pods of the pair no longer listed are forgotten.
func (f *fleetProbes) observe(pair *pdv1.PDPair, reachable []*corev1.Pod) map[string]probeResult {
	key := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	f.mu.Lock()
	defer f.mu.Unlock()
	known := f.pods[key]
	next := make(map[string]*podProbe, len(reachable))
	results := make(map[string]probeResult, len(reachable))
	for _, pod := range reachable {
		addr := agentProbeAddr(pod)
		rec := known[pod.Name]
		if rec == nil || rec.uid != pod.UID || rec.addr != addr {
			if rec != nil {
				rec.stop()
			}
			rec = &podProbe{uid: pod.UID, addr: addr}
		}
		delete(known, pod.Name)
		next[pod.Name] = rec
		results[pod.Name] = probeResult{err: errNotAskedYet}
		if rec.have {
			results[pod.Name] = rec.result
		}
		if rec.cancel == nil {
			// A fresh answer is asked again once it is fleetProbeFresh old:
			// whatever made this reconcile may have changed the agent since.
			var wait time.Duration
			if rec.have {
				wait = max(0, fleetProbeFresh-f.now().Sub(rec.at))
			}
			f.start(key, pod, rec, wait)
		}
	}
	for _, rec := range known { // pods that went
		rec.stop()
	}
	if len(next) == 0 {
		delete(f.pods, key)
	} else {
		f.pods[key] = next
	}
	return results
}

// start queues a probe of pod's agent after wait. Called with mu held.
func (f *fleetProbes) start(pair types.NamespacedName, pod *corev1.Pod, rec *podProbe, wait time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	rec.cancel = cancel
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}, Status: corev1.PodStatus{PodIP: pod.Status.PodIP}}
	target.Spec.Containers = []corev1.Container{*agentContainerSpec(pod)}
	run := func(ctx context.Context) {
		info, err := f.prober.probe(ctx, target)
		f.finish(pair, pod.Name, rec, probeResult{info: info, err: err})
	}
	submit := func() {
		if !f.slots.submit(pair.Namespace, ctx, run) {
			f.mu.Lock()
			if rec.cancel != nil {
				rec.cancel()
				rec.cancel = nil
			}
			f.mu.Unlock()
		}
	}
	if wait <= 0 {
		go submit() // not under mu: a full queue takes it
		return
	}
	time.AfterFunc(wait, func() {
		if ctx.Err() == nil {
			submit()
		}
	})
}

// finish records an answer and enqueues the pair when it differs.
func (f *fleetProbes) finish(pair types.NamespacedName, pod string, rec *podProbe, got probeResult) {
	f.mu.Lock()
	if f.pods[pair][pod] != rec { // the pod went or moved meanwhile
		f.mu.Unlock()
		return
	}
	changed := !rec.have || !sameProbe(rec.result, got)
	rec.result, rec.have, rec.at, rec.cancel = got, true, f.now(), nil
	f.mu.Unlock()
	if !changed {
		return
	}
	select {
	case f.events <- event.GenericEvent{Object: &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: pair.Namespace, Name: pair.Name}}}:
	case <-time.After(time.Second): // the controller is not running: the recheck reads it
	}
}

func (rec *podProbe) stop() {
	if rec.cancel != nil {
		rec.cancel()
		rec.cancel = nil
	}
}

// sameProbe: two answers that make the same status.
func sameProbe(a, b probeResult) bool {
	if (a.err == nil) != (b.err == nil) || (a.err != nil && a.err.Error() != b.err.Error()) {
		return false
	}
	return reflect.DeepEqual(a.info, b.info)
}

// forget drops the probes of a pair that no longer exists.
func (f *fleetProbes) forget(pair types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rec := range f.pods[pair] {
		rec.stop()
	}
	delete(f.pods, pair)
}
