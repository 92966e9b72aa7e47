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
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// BenchmarkLargestPairPlanEncodePublish is the whole cost of the largest pair
// the default budget admits (P512→D1024, 400 buffers, 409,600 fragments):
// size, plan and encode rank by rank, and publish the ConfigMaps to the real
// API server. It reports the peak Go heap above the baseline, sampled while
// it runs (the suite's manager shares the process; it has nothing to do).
func BenchmarkLargestPairPlanEncodePublish(b *testing.B) {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	// A reconciler writing straight to the API server; the pair is not
	// stored, so the suite's manager never reconciles it.
	r := &PDPairReconciler{Client: k8s, APIReader: k8s, Scheme: env.Scheme, Budget: transferplan.DefaultBudget, plans: newPlanCache(), verified: newVerifiedConfigMaps()}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	i := 0
	for b.Loop() {
		i++
		p := fixtures.Pair(ns, fmt.Sprintf("largest-%d", i)).Prefill(512, 1).Decode(1024, 1).KVPair(200, 128, 256, 64).Obj()
		p.UID, p.Generation = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)), 1
		out := planPair(p, r.Budget)
		if out.objects == nil {
			b.Fatalf("no plans: %s", out.layoutMessage)
		}
		if pub := r.publish(ctx, p, out, modelConfig{}); !pub.published {
			b.Fatalf("not published: %s: %s", pub.reason, pub.message)
		}
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapAlloc))/(1<<20), "peak-heap-MiB")
}
