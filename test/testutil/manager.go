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
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// ManagerReadyTimeout bounds a test manager's wait for readiness (its caches
// synced) on a loaded machine.
const ManagerReadyTimeout = 60 * time.Second

// ManagerBinary builds cmd/manager into a directory removed when the test
// ends (Go's build cache makes all but the first build a link).
func ManagerBinary(t testing.TB, root string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manager")
	build := exec.Command("go", "build", "-o", path, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return path
}

// StartManager runs the manager binary (cmd/manager, built for the test) against
// the API server of kubeconfig with internal/controlplane's launcher, the
// one `make run` uses: loopback metrics and probe ports, its log in a
// temporary directory, errors-only logging and any extra flags. It returns
// once the manager is ready and stops it when the test ends.
func StartManager(t testing.TB, root, kubeconfig string, extraArgs ...string) *controlplane.Process {
	t.Helper()
	p, err := controlplane.StartManager(controlplane.ManagerOptions{
		Path:       ManagerBinary(t, root),
		Kubeconfig: kubeconfig,
		LogDir:     t.TempDir(),
		ExtraArgs:  append([]string{"--zap-log-level=error"}, extraArgs...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(15 * time.Second); err != nil {
			t.Error(err)
		}
	})
	WaitManagerReady(t, p)
	return p
}

// WaitManagerReady waits for the manager's readiness probe, failing the test
// with the probe's verbose answer and the end of the manager's log.
func WaitManagerReady(t testing.TB, p *controlplane.Process) {
	t.Helper()
	err := p.WaitReady(context.Background(), "", ManagerReadyTimeout)
	if err == nil {
		return
	}
	checks := "(no answer)"
	if resp, herr := http.Get(p.ReadyURL + "?verbose"); herr == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checks = string(body)
	}
	t.Fatalf("%v\n/readyz?verbose:\n%s\nlog:\n%s", err, checks, controlplane.TailFile(p.LogPath, 40))
}

// FreePort is a free TCP port on 127.0.0.1 (controlplane.FreeLoopbackPorts).
func FreePort(t testing.TB) int {
	t.Helper()
	ports, err := controlplane.FreeLoopbackPorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}
