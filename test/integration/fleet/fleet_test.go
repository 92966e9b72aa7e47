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

package fleet

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Target from the rollout issue: with the API source, p99 of the time from
// the edit's write until an agent has loaded the new plans within 5 s for
// 1,000 agents. Every run (20 agents) asserts that each agent loads them.
const (
	targetP99    = 5 * time.Second
	ciAgents     = 20
	fleetAgents  = 1000
	namespace    = "fleet"
	pairName     = "llama"
	decodeTP     = 4
	prefillTP    = 8
	newPrefillTP = 4 // the edit: a prefill rollout from TP 8 to TP 4 changes every plan
)

// TestFleetAPISource starts n agents' API plan sources on a Ready pair,
// edits the pair's prefill layout and times each agent's load of the new
// plans, reporting the API server's watches, bytes, CPU and memory.
func TestFleetAPISource(t *testing.T) {
	n, full := ciAgents, os.Getenv("PDTOPO_FLEET") == "1"
	if full {
		n = envInt(t, "PDTOPO_FLEET_N", fleetAgents)
	}
	env := testutil.StartForTest(t)
	admin, kubeconfig := testutil.AdminUser(t, env, "fleet-admin")
	adminCfg := admin.Config()
	adminCfg.QPS, adminCfg.Burst = -1, 0
	c, err := client.New(adminCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	testutil.StartManager(t, env.Root, kubeconfig)
	testutil.CreateNamespaces(t, c, namespace)
	key := client.ObjectKey{Namespace: namespace, Name: pairName}
	if err := c.Create(context.Background(), fixtures.Pair(namespace, pairName).Spec(fixtures.Llama70B(prefillTP, decodeTP)).Obj()); err != nil {
		t.Fatal(err)
	}
	pair := testutil.WaitCondition(t, c, time.Minute, key, pdv1.PDPairReady, metav1.ConditionTrue)
	oldHash := pair.Status.Plan.Hash

	pid := apiServerPid(t, env.Config.Host)
	before := readCost(t, pid, adminCfg)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	start := time.Now()
	agents := startAPIAgents(ctx, t, agentConfig(t, env, c, namespace), namespace, pairName, n, decodeTP)
	waitAllOn(t, agents, oldHash, 10*time.Minute)
	started := readCost(t, pid, adminCfg)
	startBytes, startEvents := started.watchBytes(before)
	// client-go's informers may list through the watch (WatchList), so
	// the initial state shows as watch events rather than LIST bytes.
	t.Logf("%d agents on generation %d after %s; API server: %s; CPU %s; %.1f KiB of LIST/GET responses and %.0f watch events, %.1f KiB; RSS %s",
		n, pair.Generation, time.Since(start).Round(time.Millisecond), started.watches(),
		started.usage.CPU-before.usage.CPU, started.listBytes(before)/1024, startEvents, startBytes/1024, mib(started.usage.RSS))

	pair.Spec = fixtures.Llama70B(newPrefillTP, decodeTP)
	selfBefore := readProc(t, os.Getpid())
	t0 := time.Now()
	if err := c.Update(context.Background(), pair); err != nil {
		t.Fatal(err)
	}
	written := time.Since(t0)
	edited := testutil.WaitPair(t, c, time.Minute, key, func(p *pdv1.PDPair) bool {
		return p.Status.ObservedGeneration == p.Generation && p.Status.Plan != nil && p.Status.Plan.Hash != oldHash
	})
	published := time.Since(t0)
	lat := since(t0, waitAllOn(t, agents, edited.Status.Plan.Hash, 5*time.Minute))
	firstEvents := make([]time.Time, len(agents))
	for i, a := range agents {
		firstEvents[i] = a.firstEventAfter(t0)
	}
	t.Logf("the edit written after %s, its plans' status seen by the test after %s; the agents' first change notice: %s",
		written.Round(time.Millisecond), published.Round(time.Millisecond), since(t0, firstEvents))
	window := lat[len(lat)-1]
	after := readCost(t, pid, adminCfg)
	bytes, events := after.watchBytes(started)
	self := readProc(t, os.Getpid())
	// Every agent decodes every event and verifies its load in this one
	// process: when its CPU over the window nears the window times the
	// cores it got, the harness, not the API server, sets the pace.
	t.Logf("this process over the edit: CPU %s in %s (GOMAXPROCS %d)",
		self.CPU-selfBefore.CPU, window.Round(time.Millisecond), runtime.GOMAXPROCS(0))
	t.Logf("%d agents on generation %d (prefill TP %d → %d): %s after the edit's write", n, edited.Generation, prefillTP, newPrefillTP, lat)
	t.Logf("API server over the edit: %s; %.0f watch events, %.1f KiB sent; CPU %s; RSS %s (peak %s)",
		after.watches(), events, bytes/1024, after.usage.CPU-started.usage.CPU, mib(after.usage.RSS), mib(after.usage.HWM))
	t.Logf("this process (%d agents): peak RSS %s, CPU %s, %s since the agents started",
		n, mib(self.HWM), self.CPU, time.Since(start).Round(time.Millisecond))
	if p99 := lat.quantile(0.99); full && p99 > targetP99 {
		t.Errorf("p99 %s after the edit, target at most %s", p99, targetP99)
	}
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
