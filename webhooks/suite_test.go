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
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/pdtopo/pdtopo/controllers"
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
	Image:            testAgentImage,
	ImagePullPolicy:  corev1.PullAlways,
	ImagePullSecrets: []string{"agent-pull"},
	Resources: &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("48Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")},
	},
}

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
			return startManager(ctx)
		},
	}.Run(m)
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if k8s, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  controllers.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(env.WebhookServerOptions()),
	})
	if err != nil {
		return nil, err
	}
	r := controllers.NewPDPairReconciler(mgr)
	// The end-to-end test waits for agents to pick up a new plan.
	r.FleetRecheckInterval = 500 * time.Millisecond
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := webhooks.Register(mgr, webhooks.Options{Agent: testAgent}); err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return stopped, nil
}

// newNamespace gives a test its own namespace, and skips it without a control plane.
func newNamespace(t *testing.T) string {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return testutil.NewNamespace(t, k8s)
}

// zapLevel keeps test output to errors unless PDTOPO_TEST_VERBOSE=1.
func zapLevel() zapcore.Level {
	if os.Getenv("PDTOPO_TEST_VERBOSE") == "1" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
