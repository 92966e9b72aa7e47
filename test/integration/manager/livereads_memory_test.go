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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// The memory target: 300 pairs whose prefills answer 256 KiB
// bogus contracts (the largest answer the limits admit, a contract the
// engine refuses) grow the manager's heap by at most 48 MiB; it kept
// 256 KiB per pair before validating (+161 MiB). The controller runs in
// this process, as cmd/manager wires it, so that the heap after a GC is
// the manager's own.
const (
	bogusPairs     = 300
	bogusHeapBound = 48 << 20
)

func TestLiveReadsKeepOnlyWhatTheyValidated(t *testing.T) {
	env := testutil.StartForTest(t)
	k8s, _ := adminClient(t, env)
	ctx := context.Background()
	mgr := startInProcessManager(t, env, 4)
	targets := bogusTargets(t, bogusPairs)
	namespaces := make([]string, 10)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("bogus-%d", i)
	}
	testutil.CreateNamespaces(t, k8s, namespaces...)
	mgr.GetCache().WaitForCacheSync(ctx)
	before := heapAfterGC()

	start := time.Now()
	pairs := make([]*pdv1.PDPair, bogusPairs)
	for i := range pairs {
		p := &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("bogus-%d", i)}}
		p.Spec.Wire = pdv1.WireCacheContract
		p.Spec.Prefill.TensorParallelSize, p.Spec.Decode.TensorParallelSize = 4, 2
		p.Spec.Prefill.BootstrapAddress = targets[i]
		p.Spec.CacheContracts = &pdv1.CacheContracts{Decode: &pdv1.CacheContractSource{Inline: `{"plan":{"prefix_granularity":16}}`}}
		pairs[i] = p
	}
	createAll(t, k8s, pairs)
	testutil.Eventually(t, 3*time.Minute, "every pair's bogus contract refused", func() error {
		var list pdv1.PDPairList
		if err := k8s.List(context.Background(), &list); err != nil {
			return err
		}
		refused := 0
		for i := range list.Items {
			c := meta.FindStatusCondition(list.Items[i].Status.Conditions, string(pdv1.PDPairLayoutCompatible))
			if c != nil && c.Status == metav1.ConditionFalse && strings.HasPrefix(c.Reason, "Contract") {
				refused++
			}
		}
		if refused < bogusPairs {
			return fmt.Errorf("%d of %d refused", refused, bogusPairs)
		}
		return nil
	})
	after := heapAfterGC()
	grew := int64(after) - int64(before)
	t.Logf("%d pairs answering %d-byte bogus contracts refused after %s; heap after GC %.1f MiB → %.1f MiB (%+.1f MiB, bound %d MiB)",
		bogusPairs, plancontract.MaxBytes, time.Since(start).Round(time.Millisecond), mib(before), mib(after), float64(grew)/(1<<20), bogusHeapBound>>20)
	if grew > bogusHeapBound {
		t.Errorf("the manager's heap grew %.1f MiB for %d pairs, bound %d MiB", float64(grew)/(1<<20), bogusPairs, bogusHeapBound>>20)
	}
}

// bogusTargets starts n bootstrap servers, each answering a contract-era
// answer whose cache_layout is a 256 KiB contract the engine refuses (its
// own bytes each, so that nothing is shared between pairs).
func bogusTargets(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		head := fmt.Sprintf(`{"plan":{"prefix_granularity":16},"pad%d":"`, i)
		contract := head + strings.Repeat("x", plancontract.MaxBytes-len(head)-2) + `"}`
		answer, err := json.Marshal(map[string]any{"prefill_tp_size": 4, "prefill_dp_size": 1, "cache_layout": contract})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(answer) }))
		t.Cleanup(srv.Close)
		addrs[i] = srv.Listener.Addr().String()
	}
	return addrs
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
