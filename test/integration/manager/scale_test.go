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
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// Targets from the operator issue, on a 2-core machine: the full run
// (PDTOPO_SCALE=1, 500 PDPairs) must have every PDPair Ready within 60 s.
// Without the variable the test runs CI-sized (100 PDPairs, in every `go
// test ./...`) within the same 60 s: generous for a loaded CI runner, as the
// shared development machine makes 100 Ready in about 6 s and 500 in 30 s.
const (
	targetWall             = 60 * time.Second
	ciWall                 = 60 * time.Second
	maxReconcilesPerObject = 3.0
	defaultPairs           = 500
	ciPairs                = 100
	namespaces             = 10
	createWorkers          = 16
)

// quietWindow: once every PDPair is Ready, the reconcile count is read when
// the controller's queue has been empty, no reconcile has run and the count
// has not moved for this long. Anything still to come was triggered by a
// watch event of a write already made, which the manager sees within
// milliseconds (tens on a loaded machine); 2 s is a wide margin.
const quietWindow = 2 * time.Second

// TestScale applies PDPairs of mixed layouts at once and waits until every
// one is Ready, then checks wall time and reconciles per object and reports
// the manager's peak RSS. CI-sized by default; PDTOPO_SCALE=1 runs the full
// target (PDTOPO_SCALE_N, default 500 PDPairs, within 60 s).
func TestScale(t *testing.T) {
	n, wallBound := ciPairs, ciWall
	if os.Getenv("PDTOPO_SCALE") == "1" {
		n, wallBound = envInt(t, "PDTOPO_SCALE_N", defaultPairs), targetWall
	}
	env := testutil.StartForTest(t)
	k8s, kubeconfig := adminClient(t, env)
	mgr := testutil.StartManager(t, env.Root, kubeconfig)
	pairs := workload(layoutMix(t, env.Root), n, namespaces)
	createScaleNamespaces(t, k8s)

	ctx := context.Background()
	start := time.Now()
	createAll(t, k8s, pairs)
	created := time.Since(start)
	waitAllReady(t, k8s, n, 3*time.Minute)
	wall := time.Since(start)
	perObject := settledReconciles(ctx, t, mgr, quietWindow) / float64(n)
	rss, cpu := peakRSS(t, mgr), cpuTime(t, mgr)
	t.Logf("%d PDPairs (%d layouts): created in %s, all Ready after %s; %.2f reconciles per object; manager peak RSS %.1f MiB, CPU %s",
		n, len(layoutMix(t, env.Root)), created.Round(time.Millisecond), wall.Round(time.Millisecond), perObject, float64(rss)/(1<<20), cpu)
	if perObject > maxReconcilesPerObject {
		t.Errorf("%.2f reconciles per object, target at most %.0f", perObject, maxReconcilesPerObject)
	}
	if wall > wallBound {
		t.Errorf("%d PDPairs all Ready after %s, bound %s", n, wall, wallBound)
	}
}

// adminClient returns a client and a kubeconfig file for a cluster admin.
func adminClient(t *testing.T, env *testutil.Env) (client.Client, string) {
	t.Helper()
	user, path := testutil.AdminUser(t, env, "scale-admin")
	cfg := user.Config()
	cfg.QPS, cfg.Burst = -1, 0 // the test is the load generator: no client-side throttling
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, path
}

// createScaleNamespaces makes the namespaces the workload spreads over.
func createScaleNamespaces(t *testing.T, c client.Client) {
	t.Helper()
	names := make([]string, namespaces)
	for i := range names {
		names[i] = fmt.Sprintf("scale-%d", i)
	}
	testutil.CreateNamespaces(t, c, names...)
}

// createAll creates every PDPair from several goroutines, as a `kubectl
// apply` of a large directory would.
func createAll(t *testing.T, c client.Client, pairs []*pdv1.PDPair) {
	t.Helper()
	work := make(chan *pdv1.PDPair)
	errs := make(chan error, len(pairs))
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Go(func() {
			for p := range work {
				if err := c.Create(context.Background(), p); err != nil {
					errs <- fmt.Errorf("%s: %w", p.Name, err)
				}
			}
		})
	}
	for _, p := range pairs {
		work <- p
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// waitAllReady polls the list of PDPairs until n are Ready for their
// current generation.
func waitAllReady(t *testing.T, c client.Client, n int, timeout time.Duration) {
	t.Helper()
	testutil.Eventually(t, timeout, fmt.Sprintf("%d PDPairs Ready", n), func() error {
		var list pdv1.PDPairList
		if err := c.List(context.Background(), &list); err != nil {
			t.Fatal(err)
		}
		ready := 0
		var notReady *pdv1.PDPair
		for i := range list.Items {
			p := &list.Items[i]
			cond := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairReady))
			if cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == p.Generation {
				ready++
			} else if notReady == nil {
				notReady = p
			}
		}
		if ready == n {
			return nil
		}
		if notReady == nil {
			return fmt.Errorf("%d of %d PDPairs listed", len(list.Items), n)
		}
		return fmt.Errorf("%d of %d Ready; e.g. %s: %+v", ready, n, notReady.Name, notReady.Status.Conditions)
	}, poll.Every(250*time.Millisecond)) // a list of every pair a round
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
