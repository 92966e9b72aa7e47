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
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// One control plane and one manager for the whole package: starting
// kube-apiserver costs seconds, and every test works in its own namespace.
var (
	env *testutil.Env
	// k8s reads and writes straight to the API server, never through a cache,
	// so tests see what the server holds.
	k8s client.Client
	// skipReason is set when the control plane is deliberately absent.
	skipReason string
	// reconciles counts Reconcile calls per PDPair.
	reconciles = &reconcileCounter{counts: map[types.NamespacedName]int{}, running: map[types.NamespacedName]int{}, ended: map[types.NamespacedName]time.Time{}}
	// managerCache is the manager's informer cache: what its event handlers
	// have been told.
	managerCache cache.Cache
	// testClock is the reconciler's clock: the time now plus an offset a
	// test may add to.
	testClock = &offsetClock{}
)

type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	return testutil.Suite{
		Name:    "controllers",
		Start:   testutil.Start,
		Skipped: func(reason string) { skipReason = reason },
		RunManager: func(ctx context.Context, started *testutil.Env) (<-chan struct{}, error) {
			env = started
			var err error
			if k8s, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
				return nil, err
			}
			return testutil.InProcessManager{Cache: CacheOptions(), Setup: setupCountingReconciler}.Run(ctx, env)
		},
	}.Run(m)
}

// setupCountingReconciler registers the PDPair controller, wrapped to
// count reconciles, exactly as cmd/manager wires it.
func setupCountingReconciler(mgr ctrl.Manager) error {
	managerCache = mgr.GetCache()
	r := NewPDPairReconciler(mgr)
	r.MaxConcurrentReconciles = 2
	r.FleetRecheckInterval = 300 * time.Millisecond        // decode fleet tests wait on agents picking up plans
	r.ModelRecheckInterval = 300 * time.Millisecond        // model tests wait on ConfigMaps created or changed after the pair
	r.ContractRefreshInterval = 300 * time.Millisecond     // contract tests edit contract ConfigMaps
	r.LiveContractRefreshInterval = 300 * time.Millisecond // live contract tests change what engines answer
	r.LiveContractRetryInterval = 300 * time.Millisecond
	// Every test's bootstrap servers are on loopback; Services of the
	// namespace llm are allowed by name (TestStatusQuotesNothingATargetSent
	// names one that does not resolve); the rest is refused
	// (TestBootstrapAddressAllowlist).
	policy, err := livecontract.ParseAddressPolicy([]string{"127.0.0.0/8", "::1/128", "llm/*"})
	if err != nil {
		return err
	}
	r.BootstrapAddressPolicy = policy
	// The periodic scan for foreign plan ConfigMaps would enqueue pairs at
	// times no test chooses; TestForeignScan runs one by hand.
	r.ForeignScanInterval = time.Hour
	r.Clock = testClock.now // generation tests move it past GenerationGrace
	reconciles.inner = r
	return r.Builder(mgr).Complete(reconciles)
}

// reconcileCounter counts calls per object before passing them on, and
// knows which are running and when the last one ended.
type reconcileCounter struct {
	inner   reconcile.Reconciler
	mu      sync.Mutex
	counts  map[types.NamespacedName]int
	running map[types.NamespacedName]int
	ended   map[types.NamespacedName]time.Time
}

func (c *reconcileCounter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c.mu.Lock()
	c.counts[req.NamespacedName]++
	c.running[req.NamespacedName]++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running[req.NamespacedName]--
		c.ended[req.NamespacedName] = time.Now()
		c.mu.Unlock()
	}()
	return c.inner.Reconcile(ctx, req)
}

// idleFor is how long no reconcile of key has been running (0 while one is).
func (c *reconcileCounter) idleFor(key types.NamespacedName) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[key] > 0 {
		return 0
	}
	return time.Since(c.ended[key])
}

func (c *reconcileCounter) of(key types.NamespacedName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}
