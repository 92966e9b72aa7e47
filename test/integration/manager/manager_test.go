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

package manager

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/controlplane"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// peakRSS is the manager's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, m *controlplane.Process) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", m.Pid()))
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
func cpuTime(t *testing.T, m *controlplane.Process) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.Pid()))
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
func reconciles(ctx context.Context, t *testing.T, m *controlplane.Process) float64 {
	t.Helper()
	return pdpairMetric(ctx, t, m, "controller_runtime_reconcile_total")
}

// metric sums the samples of a metric of the PDPair controller (and its
// work queue) from the manager's metrics endpoint.
func pdpairMetric(ctx context.Context, t *testing.T, m *controlplane.Process, name string) float64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.MetricsURL, nil)
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
func settledReconciles(ctx context.Context, t *testing.T, m *controlplane.Process, quiet time.Duration) float64 {
	t.Helper()
	last, since := -1.0, time.Now()
	testutil.Eventually(t, time.Minute, fmt.Sprintf("the PDPair controller quiet for %s", quiet), func() error {
		n := reconciles(ctx, t, m)
		busy := pdpairMetric(ctx, t, m, "workqueue_depth") + pdpairMetric(ctx, t, m, "controller_runtime_active_workers")
		if n != last || busy > 0 {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			return nil
		}
		return fmt.Errorf("%v reconciles, %v queued or running", n, busy)
	}, poll.Every(100*time.Millisecond))
	return last
}
