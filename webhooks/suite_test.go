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

package webhooks_test

import (
	"context"
	"crypto/ed25519"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/webhooks"
)

// testAgentImage is the --agent-image the test manager runs with.
const testAgentImage = "registry.test/pdtopo/receiver-agent:v-test"

// testAgent is what the test manager injects: settings other than the
// webhook's defaults (--agent-image-pull-policy, --agent-image-pull-secrets,
// --agent-cpu-request, …), so that the tests see them reach pods through the
// API server.
var testAgent = webhooks.AgentSidecar{
	PlanPublicKeys:   []string{planstore.EncodePublicKey(testSigner.PublicKey())},
	Image:            testAgentImage,
	ImagePullPolicy:  corev1.PullAlways,
	ImagePullSecrets: []string{"agent-pull"},
	Resources: &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("48Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")},
	},
}

// testSigner is the manager's plan signing key in this suite.
var testSigner = planstore.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))

// One control plane with config/webhook installed, and one manager running
// the PDPair controller and the webhook server the API server calls, wired
// as cmd/manager wires them.
var (
	env        *testutil.Env
	k8s        client.Client
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	return testutil.Suite{
		Name:    "webhook",
		Start:   testutil.StartWithWebhooks,
		Skipped: func(reason string) { skipReason = reason },
		RunManager: func(ctx context.Context, started *testutil.Env) (<-chan struct{}, error) {
			env = started
			var err error
			if k8s, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
				return nil, err
			}
			return testutil.InProcessManager{Cache: controllers.CacheOptions(), Webhooks: true, Setup: setupControllerAndWebhooks}.Run(ctx, env)
		},
	}.Run(m)
}

// setupControllerAndWebhooks registers the PDPair controller and the
// webhooks as cmd/manager does, with the test's agent.
func setupControllerAndWebhooks(mgr ctrl.Manager) error {
	r := controllers.NewPDPairReconciler(mgr)
	r.Signer = testSigner
	// The end-to-end test waits for agents to pick up a new plan.
	r.FleetRecheckInterval = 500 * time.Millisecond
	// The rollout test moves it past controllers.GenerationGrace.
	r.Clock = rolloutClock.now
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	return webhooks.Register(mgr, webhooks.Options{Agent: testAgent})
}

// rolloutClock is the reconciler's clock: the time now plus an offset a
// test may add to (no test of this package runs in parallel).
var rolloutClock = &offsetClock{}

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
	defer c.mu.Unlock()
	c.offset += d
}

// newNamespace gives a test its own namespace, and skips it without a control plane.
func newNamespace(t *testing.T) string {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return testutil.NewNamespace(t, k8s)
}
