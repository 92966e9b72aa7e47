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

package manager

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// The scale target for live reads: the manager's memory stays
// bounded with 5,000 PDPairs whose live targets answer the largest answers
// the limits admit. Half the pairs' bootstrap servers answer a valid
// contract padded to the engine's 256 KiB limit (an unknown top-level key,
// which the engine ignores, each pair its own bytes), half a 256 KiB
// contract the engine refuses; both escaped so that the answer is as large
// as a parallel-info answer may be. The manager binary runs as deployed
// (config/manager's 512 MiB limit, --max-plan-memory 256 MiB).
//
// CI-sized by default (liveScaleCIPairs); PDTOPO_MANAGER_SCALE=1 runs
// PDTOPO_MANAGER_SCALE_N pairs (default 5,000), and watches one refresh
// period more once every pair has its verdict: `make bench-manager-scale`.
const (
	liveScalePairs      = 5000
	liveScaleCIPairs    = 100
	liveScaleNamespaces = 50
	// liveScaleRSSBound is config/manager's memory limit less a margin for
	// the spikes a sample misses: past it the kubelet OOM-kills the leader.
	liveScaleRSSBound = 400 << 20
	// liveScaleKeptBound bounds the live contracts kept: the valid answers
	// are one contract padded differently, kept once (3 KiB). Keeping the
	// bytes as read kept 256 KiB a pair, up to 64 MiB.
	liveScaleKeptBound = 1 << 20
	// liveScaleSettle bounds the time until every pair has its verdict.
	liveScaleSettle = 10 * time.Minute
)

func TestLiveReadsAtScale(t *testing.T) {
	n, refresh := liveScaleCIPairs, time.Duration(0)
	if os.Getenv("PDTOPO_MANAGER_SCALE") == "1" {
		n, refresh = envInt(t, "PDTOPO_MANAGER_SCALE_N", liveScalePairs), 35*time.Second
	}
	env := testutil.StartForTest(t)
	k8s, kubeconfig := adminClient(t, env)
	mgr := testutil.StartManager(t, env.Root, kubeconfig)
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	targets := startLargestAnswers(t, n, v.PrefillContract)
	namespaces := make([]string, liveScaleNamespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("live-%d", i)
	}
	testutil.CreateNamespaces(t, k8s, namespaces...)

	sampler := sampleManagerMemory(t, mgr)
	base := sampler.now(t)
	pairs := make([]*pdv1.PDPair, n)
	for i := range pairs {
		p := &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("live-%d", i)}}
		p.Spec.Wire = pdv1.WireCacheContract
		p.Spec.Prefill.TensorParallelSize, p.Spec.Decode.TensorParallelSize = int32(v.Prefill.TPSize), int32(v.Decode.TPSize)
		p.Spec.Prefill.BootstrapAddress = targets.addrs[i]
		p.Spec.CacheContracts = &pdv1.CacheContracts{Decode: &pdv1.CacheContractSource{Inline: string(v.DecodeContract)}}
		pairs[i] = p
	}
	start := time.Now()
	createAll(t, k8s, pairs)
	waitLiveVerdicts(t, k8s, n, targets)
	settled := time.Since(start)
	// The full run watches a refresh period more: every source read again.
	time.Sleep(refresh)
	peak := sampler.stop()
	t.Logf("%d PDPairs (%d valid %d-byte contracts, %d refused ones, %d-byte answers): every verdict after %s; manager heap %.1f MiB before, peak %.1f MiB (%+.1f); RSS %.1f MiB before, peak %.1f MiB (VmHWM %.1f MiB); live contracts kept at most %d bytes; CPU %s",
		n, targets.valid, targets.contractBytes, n-targets.valid, targets.answerBytes, settled.Round(time.Second),
		mib(base.heap), mib(peak.heap), mib(peak.heap)-mib(base.heap), mib(base.rss), mib(peak.rss), mib(uint64(peakRSS(t, mgr))), peak.kept, cpuTime(t, mgr))
	if hwm := peakRSS(t, mgr); hwm > liveScaleRSSBound {
		t.Errorf("the manager's peak RSS is %.1f MiB with %d pairs, bound %d MiB", mib(uint64(hwm)), n, liveScaleRSSBound>>20)
	}
	if peak.kept > liveScaleKeptBound {
		t.Errorf("the manager kept up to %d bytes of live contracts for %d pairs answering one contract padded differently, bound %d", peak.kept, targets.valid, liveScaleKeptBound)
	}
}

// waitLiveVerdicts waits until every pair has the verdict its target's
// answer calls for: Ready for a valid contract, LayoutCompatible=False for
// a contract the engine refuses.
func waitLiveVerdicts(t *testing.T, c client.Client, n int, targets *largestAnswers) {
	t.Helper()
	settle := liveScaleSettle
	if s := os.Getenv("PDTOPO_MANAGER_SCALE_SETTLE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("PDTOPO_MANAGER_SCALE_SETTLE=%q: %v", s, err)
		}
		settle = d
	}
	testutil.Eventually(t, settle, fmt.Sprintf("%d PDPairs with their verdicts", n), func() error {
		var list pdv1.PDPairList
		if err := c.List(context.Background(), &list); err != nil {
			return err
		}
		done, ready, refused := 0, 0, 0
		var example string
		for i := range list.Items {
			p := &list.Items[i]
			var idx int
			if _, err := fmt.Sscanf(p.Name, "live-%d", &idx); err != nil {
				continue
			}
			want, status := pdv1.PDPairReady, metav1.ConditionTrue
			if !targets.isValid(idx) {
				want, status = pdv1.PDPairLayoutCompatible, metav1.ConditionFalse
			}
			cond := meta.FindStatusCondition(p.Status.Conditions, string(want))
			if cond != nil && cond.Status == status && cond.ObservedGeneration == p.Generation {
				done++
				if status == metav1.ConditionTrue {
					ready++
				} else {
					refused++
				}
			} else if example == "" {
				example = fmt.Sprintf("%s: %s is %+v", p.Name, want, cond)
			}
		}
		if done < n {
			return fmt.Errorf("%d of %d (%d Ready, %d refused); e.g. %s", done, n, ready, refused, example)
		}
		return nil
	}, poll.Every(2*time.Second))
}
