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

package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// managerProcess is the real manager binary, run against the test's API server.
type managerProcess struct {
	cmd                  *exec.Cmd
	metricsURL, readyURL string
	log                  string
}

// startManager builds cmd/manager and starts it with the kubeconfig and any
// extra flags.
func startManager(t *testing.T, root, kubeconfig string, extraArgs ...string) *managerProcess {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	metrics, probes := freePort(t), freePort(t)
	m := &managerProcess{
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics),
		readyURL:   fmt.Sprintf("http://127.0.0.1:%d/readyz", probes),
		log:        filepath.Join(dir, "manager.log"),
	}
	logFile, err := os.Create(m.log)
	if err != nil {
		t.Fatal(err)
	}
	m.cmd = exec.Command(bin, "--kubeconfig", kubeconfig, "--leader-elect=false",
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes),
		"--zap-log-level=error")
	m.cmd.Args = append(m.cmd.Args, extraArgs...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.cmd.Process.Signal(os.Interrupt)
		_ = m.cmd.Wait()
		logFile.Close()
	})
	m.waitReady(t)
	return m
}

func (m *managerProcess) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(m.readyURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(m.log)
	checks := "(no answer)"
	if resp, err := http.Get(m.readyURL + "?verbose"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checks = string(body)
	}
	t.Fatalf("manager not ready after 30s; /readyz?verbose:\n%s\nlog:\n%s", checks, b)
}

// peakRSS is the manager's peak resident set size (VmHWM), in bytes.
func (m *managerProcess) peakRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// cpuTime is the user+system CPU the manager has used (from /proc, in
// clock ticks of 1/100 s, the Linux USER_HZ).
func (m *managerProcess) cpuTime(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// reconciles sums controller_runtime_reconcile_total for the PDPair
// controller, every result included, from the manager's metrics endpoint.
func (m *managerProcess) reconciles(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	return m.metric(ctx, t, "controller_runtime_reconcile_total")
}

// metric sums the samples of a metric of the PDPair controller (and its
// work queue) from the manager's metrics endpoint.
func (m *managerProcess) metric(ctx context.Context, t *testing.T, name string) float64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.metricsURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0.0
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, name+"{") && (strings.Contains(line, `controller="pdpair"`) || strings.Contains(line, `name="pdpair"`)) {
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", line, err)
			}
			total += v
		}
	}
	return total
}

// settledReconciles waits until the PDPair controller is idle (an empty
// queue, no reconcile running) and its reconcile count has not moved for
// quiet, then returns the count.
func (m *managerProcess) settledReconciles(ctx context.Context, t *testing.T, quiet time.Duration) float64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last, since := -1.0, time.Now()
	for {
		n := m.reconciles(ctx, t)
		busy := m.metric(ctx, t, "workqueue_depth") + m.metric(ctx, t, "controller_runtime_active_workers")
		if n != last || busy > 0 {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("the PDPair controller did not go quiet for %s within a minute: %v reconciles, %v queued or running", quiet, n, busy)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
