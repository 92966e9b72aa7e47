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

// Package python_test runs the Python adapter's tests (clients/python/tests)
// with the system python3 as part of `go test ./...` and so of `make
// test`: they drive the adapter against the real receiver-agent and
// prefill-peer binaries, built here from this checkout.
package python_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func TestPythonAdapter(t *testing.T) {
	python := findPython(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH (needed to build the agent for the adapter's tests): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	bin := t.TempDir()
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin+string(filepath.Separator), "./cmd/receiver-agent", "./cmd/prefill-peer", "./cmd/pdtopo")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent, the prefill peer and pdtopo: %v\n%s", err, out)
	}

	run := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	run.Env = append(os.Environ(), "PDTOPO_TEST_BIN_DIR="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest (in clients/python): %v\n%s", err, out)
	}
	t.Logf("%s", out)
	// unittest reports skips as a pass ("OK (skipped=N)"): a test that
	// turned itself off (numpy missing, say) must not pass quietly.
	if m := skippedRe.FindSubmatch(out); m != nil && os.Getenv(allowSkipsEnv) != "1" {
		t.Fatalf("python3 -m unittest skipped %s tests (see the log above); install what they need (CI installs python3-numpy, python3-setuptools and python3-wheel) or set %s=1 to allow it", m[1], allowSkipsEnv)
	}
}

// findPython is the first python3 (on PATH, then the system's) that has
// numpy (for the adapter's numpy test), setuptools and wheel (to build its
// wheel); without one, the one on PATH, and those tests fail.
func findPython(t *testing.T) string {
	t.Helper()
	var found []string
	if p, err := exec.LookPath("python3"); err == nil {
		found = append(found, p)
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		found = append(found, "/usr/bin/python3")
	}
	if len(found) == 0 {
		t.Fatal("python3 is not on PATH; the adapter's tests need a Python ≥ 3.11 (standard library; numpy, setuptools and wheel for some tests)")
	}
	for _, p := range found {
		if exec.Command(p, "-c", "import numpy, setuptools, wheel").Run() == nil {
			return p
		}
	}
	return found[0]
}

// allowSkipsEnv lets a run allow Python tests that skip themselves.
const allowSkipsEnv = "PDTOPO_ALLOW_PYTHON_SKIPS"

var skippedRe = regexp.MustCompile(`skipped=(\d+)`)
