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
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// fleetVictimBound: a pair in another namespace is planned and its status
// written this soon although every reconcile worker would, with probes in
// Reconcile, wait on agents that never answer (2 s a probe).
const fleetVictimBound = time.Second

// Decode pods whose agents accept connections and never answer hold probe
// slots, never reconcile workers: another namespace's pair is observed
// within 1 s, and the hostile pairs' status says their agents do not
// answer, in the manager's words.
func TestFleetProbesOffTheReconcilePath(t *testing.T) {
	hostile := newNamespace(t)
	silent := fixtures.SilentListener(t)
	_, portText, _ := net.SplitHostPort(silent.Addr())
	port, _ := strconv.Atoi(portText)
	var pairs []*pdv1.PDPair
	for i := range 2 * 2 { // twice the suite's workers
		p := fixtures.Pair(hostile, fmt.Sprintf("silent-%d", i)).Spec(fixtures.Llama70B(8, 4)).Obj()
		create(t, p)
		pairs = append(pairs, p)
		for j := range 8 {
			runPod(t, fixtures.DecodePod(hostile, fmt.Sprintf("silent-%d-decode-%d", i, j), p.Name).WithAgent(int32(port)).Obj(), fixtures.RunningStatus(true))
		}
	}
	waitFleet(t, pairs[0], metav1.ConditionFalse, pdv1.ReasonAgentsNotReady, 8, 8, 0)
	victim := fixtures.Pair(newNamespace(t), "victim").Spec(fixtures.Llama70B(8, 4)).Obj()
	start := time.Now()
	create(t, victim)
	waitObserved(t, victim)
	d := time.Since(start)
	t.Logf("victim observed after %s beside %d pairs of 8 silent decode pods (%d probe connections held)", d.Round(time.Millisecond), len(pairs), silent.Open())
	if d > fleetVictimBound {
		t.Errorf("the victim waited %s for a reconcile, bound %s", d, fleetVictimBound)
	}
	if n := silent.Open(); n > fleetProbeSlots {
		t.Errorf("%d probes in flight, at most %d", n, fleetProbeSlots)
	}
	waitFleet(t, pairs[0], metav1.ConditionFalse, pdv1.ReasonAgentsNotReady, 8, 8, 0, "the agent's probe address does not answer: GET http://127.0.0.1:"+portText+"/v1/agent: Unreachable")
}
