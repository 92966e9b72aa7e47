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
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// agentServiceAccount is the service account config/agent-rbac binds.
const agentServiceAccount = "pdtopo-receiver-agent"

// startWorkers bounds how many agents set up their informers at once: a
// fleet's pods start over seconds, not in one instant, and 1,000 initial
// lists at once would measure the API server's admission queue instead.
const startWorkers = 32

// agentConfig applies config/agent-rbac in namespace and returns the
// client configuration of its service account: the identity and the
// permissions `receiver-agent --pdpair` has in a decode pod (envtest
// authenticates it by a client certificate rather than a token).
func agentConfig(t *testing.T, env *testutil.Env, c client.Client, namespace string) *rest.Config {
	t.Helper()
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	readYAML(t, filepath.Join(env.Root, "config", "agent-rbac", "role.yaml"), &role)
	readYAML(t, filepath.Join(env.Root, "config", "agent-rbac", "role_binding.yaml"), &binding)
	role.Namespace, binding.Namespace = namespace, namespace
	for i := range binding.Subjects {
		binding.Subjects[i].Namespace = namespace // what `kubectl apply -n` gives it
	}
	for _, obj := range []client.Object{&role, &binding} {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	user, err := env.AddUser(envtest.User{
		Name:   fmt.Sprintf("system:serviceaccount:%s:%s", namespace, agentServiceAccount),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := user.Config()
	cfg.UserAgent = "pdtopo-receiver-agent"
	return cfg
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// agent is one receiver agent's plan source and what it has loaded.
type agent struct {
	mu     sync.Mutex
	hash   string
	loaded time.Time
	events []time.Time // when the source said it may have changed
	// watchErr is why the source could not watch: the Follower would
	// then re-read only every Resync, and the benchmark measure nothing.
	watchErr error
}

// firstEventAfter is when the source first told the agent of a change
// after t0 (the zero time if it has not).
func (a *agent) firstEventAfter(t0 time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.events {
		if e.After(t0) {
			return e
		}
	}
	return time.Time{}
}

// watched is a source whose change notices the agent records before the
// Follower sees them: the benchmark tells the watch's delivery apart from
// the load it triggers, without a hook in plansource.
type watched struct {
	plansource.Source
	a *agent
}

func (w watched) Notify(ctx context.Context, changed func()) error {
	n, ok := w.Source.(plansource.Notifier)
	if !ok {
		return fmt.Errorf("%s cannot notify", w.Describe())
	}
	err := n.Notify(ctx, func() {
		w.a.mu.Lock()
		w.a.events = append(w.a.events, time.Now())
		w.a.mu.Unlock()
		changed()
	})
	if err != nil {
		w.a.mu.Lock()
		w.a.watchErr = err
		w.a.mu.Unlock()
	}
	return err
}

func (a *agent) apply(p plansource.Plans) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hash, a.loaded = p.Hash, time.Now()
	return nil
}

// current is the hash of the plans the agent runs, when it loaded them,
// and why its source could not watch (nil if it watches).
func (a *agent) current() (string, time.Time, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hash, a.loaded, a.watchErr
}

// newAPIAgent builds what cmd/receiver-agent builds for --pdpair
// (plansource.NewAPI), from cfg instead of a kubeconfig file, with a
// transport of its own: client-go would otherwise share one connection
// among every client of the same credentials in this process, while each
// agent is a process of its own with its own connection and rate limiter.
func newAPIAgent(cfg *rest.Config, namespace, pair string, engineRank int) (*plansource.API, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext // a Dial makes the transport uncached
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return plansource.NewAPIForConfig(cfg, hc, namespace, pair, []int{engineRank})
}

// follow runs a Follower on src until ctx ends, as the agent does after
// its first load; the agent records every plan set it installs.
func follow(ctx context.Context, src plansource.Source) *agent {
	a := &agent{}
	f := &plansource.Follower{
		Source: watched{Source: src, a: a},
		Resync: time.Hour, // the benchmark measures the watch, not the safety net
		Apply:  a.apply,
		Report: func(error) {},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	go f.Run(ctx, plansource.Loaded{})
	return a
}

// startAPIAgents starts n agents on the pair, their engine ranks cycling
// over decodeTP, startWorkers at a time.
func startAPIAgents(ctx context.Context, t *testing.T, cfg *rest.Config, namespace, pair string, n, decodeTP int) []*agent {
	t.Helper()
	agents := make([]*agent, n)
	errs := make(chan error, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for range startWorkers {
		wg.Go(func() {
			for i := range work {
				src, err := newAPIAgent(cfg, namespace, pair, i%decodeTP)
				if err != nil {
					errs <- err
					continue
				}
				agents[i] = follow(ctx, src)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return agents
}

// waitAllOn waits until every agent runs the plans of hash and returns
// each one's load time.
func waitAllOn(t *testing.T, agents []*agent, hash string, timeout time.Duration) []time.Time {
	t.Helper()
	at := make([]time.Time, len(agents))
	testutil.Eventually(t, timeout, fmt.Sprintf("%d agents on plans %s", len(agents), hash), func() error {
		behind := 0
		for i, a := range agents {
			h, when, err := a.current()
			if err != nil {
				return poll.Stop(fmt.Errorf("agent %d: %w", i, err))
			}
			if h != hash {
				behind++
				continue
			}
			at[i] = when
		}
		if behind > 0 {
			return fmt.Errorf("%d of %d agents not on them yet", behind, len(agents))
		}
		return nil
	})
	return at
}

// latencies are the agents' load times after t0, sorted.
type latencies []time.Duration

func since(t0 time.Time, at []time.Time) latencies {
	l := make(latencies, len(at))
	for i, when := range at {
		l[i] = when.Sub(t0)
	}
	l.sort()
	return l
}

func (l latencies) sort() { slices.Sort(l) }

// quantile is the q-quantile by the nearest-rank method.
func (l latencies) quantile(q float64) time.Duration {
	i := int(float64(len(l))*q+0.999999) - 1
	return l[min(max(i, 0), len(l)-1)]
}

func (l latencies) String() string {
	return fmt.Sprintf("min %s, p50 %s, p99 %s, max %s", l[0].Round(time.Millisecond),
		l.quantile(0.5).Round(time.Millisecond), l.quantile(0.99).Round(time.Millisecond), l[len(l)-1].Round(time.Millisecond))
}
