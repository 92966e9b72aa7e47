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
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pdtopo/pdtopo/test/fixtures"
)

// BenchmarkProbeFleet asks 128 real agents' probe addresses (HTTP servers on
// loopback) which plan they run, as one reconcile of a 128-pod decode fleet
// does: 16 at a time, connections reused across reconciles.
func BenchmarkProbeFleet(b *testing.B) {
	const n = 128
	var pods []*corev1.Pod
	for i := range n {
		a := fixtures.NewAgentProbe("abc")
		b.Cleanup(a.Close)
		pod := fixtures.DecodePod("ns", fmt.Sprintf("decode-%d", i), "p").WithAgent(a.Port()).Obj()
		pod.Status = fixtures.RunningStatus(true)
		pods = append(pods, pod)
	}
	p := newAgentProber()
	b.ResetTimer()
	for b.Loop() {
		res := p.probeAll(context.Background(), pods)
		for name, r := range res {
			if r.err != nil || r.info.PlanHash != "abc" {
				b.Fatalf("%s: %+v", name, r)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/agent")
}
