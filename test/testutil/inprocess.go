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

package testutil

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// InProcessManager is a manager a suite runs in its own process against
// its control plane, wired by Setup as cmd/manager wires its parts (the
// PDPair controller, the webhooks): the suites of controllers, webhooks and
// cmd/pdtopo share one launcher. StartManager runs the binary instead.
type InProcessManager struct {
	// Cache is the manager's cache (controllers.CacheOptions, maybe
	// narrowed to some namespaces).
	Cache cache.Options
	// Webhooks serves the webhooks the control plane calls
	// (StartWithWebhooks).
	Webhooks bool
	// Setup registers the manager's controllers and webhooks.
	Setup func(mgr ctrl.Manager) error
}

// Run starts the manager on env, its metrics and probes off, logging
// errors only unless PDTOPO_TEST_VERBOSE=1. The channel closes once the
// manager has stopped after ctx is cancelled: a Suite's RunManager.
func (m InProcessManager) Run(ctx context.Context, env *Env) (<-chan struct{}, error) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(logLevel())))
	opts := ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  m.Cache,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	if m.Webhooks {
		opts.WebhookServer = webhook.NewServer(env.WebhookServerOptions())
	}
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		return nil, err
	}
	if err := m.Setup(mgr); err != nil {
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

// logLevel keeps test output to errors unless PDTOPO_TEST_VERBOSE=1.
func logLevel() zapcore.Level {
	if os.Getenv("PDTOPO_TEST_VERBOSE") == "1" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
