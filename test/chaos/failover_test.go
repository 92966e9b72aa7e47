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

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

const (
	failoverPairs = 4
	leaseName     = "pdtopo-manager.pd.pdtopo.dev"
	leaseNS       = "default"
	// leaderKills: each takes a lease duration (15 s) to fail over.
	leaderKills = 2
	// editEvery: the editor edits one pair this often, each pair every
	// failoverPairs × editEvery (0.8 s).
	editEvery = 200 * time.Millisecond
	// leaderPublishes bounds the time from a manager's taking the lease to
	// every pair having published a plan it had not before, while the
	// edits go on (1–3 s on the development machine).
	leaderPublishes = 20 * time.Second
)

// TestManagerLeaderKilledWhilePairsChange runs two managers with leader
// election against a real API server, edits PDPairs without pause (each
// edit a layout never used before, so a new plan hash) and SIGKILLs the
// leader twice, starting a new standby each time. No plan the operator
// published may be rolled back (a replaced plan hash never comes back) or
// lost (once every pair is Ready, its index holds the plan of its last
// spec); and publication does not wait for the edits to stop: under each
// leader, while the edits go on, every pair publishes a new plan before
// the leader is killed.
func TestManagerLeaderKilledWhilePairsChange(t *testing.T) {
	if testing.Short() {
		t.Skip("the failover suite waits out two lease durations; -short leaves it out")
	}
	env := testutil.StartForTest(t)
	user, kubeconfig := testutil.AdminUser(t, env, "chaos-admin")
	c, err := client.New(user.Config(), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	bin := testutil.ManagerBinary(t, env.Root)
	start := func() *controlplane.Process {
		p, err := controlplane.StartManager(controlplane.ManagerOptions{
			Path: bin, Kubeconfig: kubeconfig, LogDir: t.TempDir(),
			ExtraArgs: []string{"--zap-log-level=error", "--leader-elect", "--leader-election-namespace=" + leaseNS},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(p.Pid(), syscall.SIGKILL); <-p.Exited() })
		testutil.WaitManagerReady(t, p)
		return p
	}
	ctx := context.Background()
	ns := testutil.NewNamespace(t, c)
	specOf := func(edit int) pdv1.PDPairSpec {
		return fixtures.GQAPair(ns, "x", 8, 4, int32(8+edit), 512).Spec
	}
	names := make([]string, failoverPairs)
	for i := range names {
		names[i] = fmt.Sprintf("pair-%d", i)
		p := &pdv1.PDPair{}
		p.Namespace, p.Name, p.Spec = ns, names[i], specOf(0)
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	managers := []*controlplane.Process{start(), start()}
	t0 := time.Now()
	el := func() string { return time.Since(t0).Round(10 * time.Millisecond).String() }

	// the editor: every editEvery one pair gets the next layout
	edits := make([]int, failoverPairs)
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(editEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			k := i % failoverPairs
			p := &pdv1.PDPair{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: names[k]}, p); err != nil {
				continue
			}
			mu.Lock()
			next := edits[k] + 1
			mu.Unlock()
			p.Spec = specOf(next)
			if c.Update(ctx, p) == nil {
				mu.Lock()
				edits[k] = next
				mu.Unlock()
			}
		}
	}()
	// the watcher: each pair's published plan hashes, in the order seen
	seen := make([][]string, failoverPairs)
	rollbacks := make(chan string, 16)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for k, name := range names {
				h := publishedHash(ctx, c, ns, name)
				if h == "" {
					continue
				}
				mu.Lock()
				s := seen[k]
				if len(s) == 0 || s[len(s)-1] != h {
					for _, old := range s {
						if old == h {
							select {
							case rollbacks <- fmt.Sprintf("%s: plan %s published again after %s replaced it", name, short(h), short(s[len(s)-1])):
							default:
							}
						}
					}
					seen[k] = append(s, h)
					t.Logf("%s %s: plan %s published", el(), name, short(h))
				}
				mu.Unlock()
			}
		}
	}()

	// freshPlans waits until every pair has published a plan it had not
	// published when the leader took the lease, the edits going on.
	freshPlans := func(term int, took time.Time) {
		mu.Lock()
		before := make([]int, failoverPairs)
		for k := range seen {
			before[k] = len(seen[k])
		}
		mu.Unlock()
		testutil.Eventually(t, leaderPublishes, fmt.Sprintf("leader %d: every pair publishing a new plan while the edits go on", term), func() error {
			mu.Lock()
			defer mu.Unlock()
			for k, name := range names {
				if len(seen[k]) == before[k] {
					return fmt.Errorf("%s: no new plan since %s (%d edits so far)", name, el(), edits[k])
				}
			}
			return nil
		})
		t.Logf("%s leader %d: every pair published a new plan %s after the lease was taken, the edits going on", el(), term, time.Since(took).Round(10*time.Millisecond))
	}
	took := time.Now()
	for kill := range leaderKills {
		holder := leaseHolder(t, ctx, c)
		leader := testutil.EventuallyValue(t, 60*time.Second, "a manager leading", func() (*controlplane.Process, error) {
			for _, m := range managers {
				if isLeader(ctx, m) {
					return m, nil
				}
			}
			return nil, fmt.Errorf("none of %d managers reports leader_election_master_status 1", len(managers))
		})
		freshPlans(kill+1, took)
		t.Logf("%s kill %d: SIGKILL the leader (pid %d, lease %s) while pairs change", el(), kill+1, leader.Pid(), holder)
		if err := syscall.Kill(leader.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-leader.Exited()
		live := []*controlplane.Process{start()}
		for _, m := range managers {
			if m != leader {
				live = append(live, m)
			}
		}
		managers = live
		testutil.EventuallyTrue(t, 60*time.Second, "the standby taking the lease", func() bool {
			h := leaseHolder(t, ctx, c)
			return h != "" && h != holder
		})
		took = time.Now()
		t.Logf("%s the standby took the lease", el())
	}
	freshPlans(leaderKills+1, took)
	close(stop)
	t.Logf("%s edits stop", el())
	wg.Wait()
	close(rollbacks)
	for r := range rollbacks {
		t.Error(r)
	}

	// nothing lost: every pair Ready for its last spec, whose plan is published
	for k, name := range names {
		want := planHash(t, specOf(edits[k]))
		testutil.Eventually(t, 60*time.Second, name+" publishing the plan of its last spec", func() error {
			if h := publishedHash(ctx, c, ns, name); h != want {
				return fmt.Errorf("published %s, want %s (edit %d)", short(h), short(want), edits[k])
			}
			return nil
		})
		mu.Lock()
		t.Logf("%s: %d edits, %d plans seen published", name, edits[k], len(seen[k]))
		mu.Unlock()
	}
}

// publishedHash is the plan hash of the pair's index ConfigMap ("" when
// there is none yet).
func publishedHash(ctx context.Context, c client.Client, ns, name string) string {
	cm := &corev1.ConfigMap{}
	if c.Get(ctx, types.NamespacedName{Namespace: ns, Name: planstore.IndexConfigMapName(name)}, cm) != nil {
		return ""
	}
	var idx planstore.Index
	if json.Unmarshal([]byte(cm.Data[planstore.IndexKey]), &idx) != nil {
		return ""
	}
	return idx.PlanHash
}

// planHash is the hash of the plan set the operator must publish for spec.
func planHash(t *testing.T, spec pdv1.PDPairSpec) string {
	t.Helper()
	l, err := tokenspeed.FromSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatal(err)
	}
	return set.Hash()
}

// isLeader reads controller-runtime's leader_election_master_status from
// the manager's metrics.
func isLeader(ctx context.Context, m *controlplane.Process) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.MetricsURL, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

func leaseHolder(t *testing.T, ctx context.Context, c client.Client) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: leaseNS, Name: leaseName}, l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
