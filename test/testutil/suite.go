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
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// Suite is one package's integration suite: a control plane started once,
// a manager run against it for every test.
type Suite struct {
	// Name says whose tests are skipped, in the SKIP line.
	Name string
	// Start starts the control plane (Start or StartWithWebhooks).
	Start func() (*Env, error)
	// Skipped is told why the control plane is deliberately absent
	// (SkipEnv=1); the unit tests still run.
	Skipped func(reason string)
	// RunManager starts the package's manager on env; the channel closes
	// once the manager has stopped after ctx is cancelled.
	RunManager func(ctx context.Context, env *Env) (<-chan struct{}, error)
}

// Run is the body of the package's TestMain: it starts the control plane
// and the manager, runs the tests, and stops both. It returns the exit code.
func (s Suite) Run(m *testing.M) int {
	env, err := s.Start()
	if errors.Is(err, ErrSkip) {
		s.Skipped(err.Error())
		fmt.Fprintf(os.Stderr, "SKIP %s integration tests: %v\n", s.Name, err)
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped, err := s.RunManager(ctx, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	cancel()
	<-stopped
	return code
}

// StartBareForTest is StartForTest without the CRDs: an API server that
// knows nothing of pdtopo, for tests of what installs it.
func StartBareForTest(t testing.TB) *Env {
	t.Helper()
	env, err := start(func(_ string, o *controlplane.Options) { o.CRDDir = "" })
	if errors.Is(err, ErrSkip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}

// StartForTest starts a control plane for one test and stops it when the
// test ends. Without the binaries it fails the test with instructions, or
// skips it when SkipEnv=1.
func StartForTest(t testing.TB) *Env {
	t.Helper()
	env, err := Start()
	if errors.Is(err, ErrSkip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}
