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
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiServerPid finds the kube-apiserver serving host (its --secure-port)
// among this machine's processes: envtest does not expose its pid, and
// several helpers' control planes may run at once.
func apiServerPid(t *testing.T, host string) int {
	t.Helper()
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	flag := []byte("--secure-port=" + u.Port())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(cmd, []byte{0})
		if filepath.Base(string(args[0])) != "kube-apiserver" {
			continue
		}
		for _, a := range args {
			if bytes.Equal(a, flag) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				return pid
			}
		}
	}
	t.Fatalf("no kube-apiserver process with %s", flag)
	return 0
}

// procUsage is a process's CPU (user+system) and memory so far.
type procUsage struct {
	CPU      time.Duration
	RSS, HWM int64 // VmRSS and VmHWM, bytes
}

func readProc(t *testing.T, pid int) procUsage {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	u := procUsage{CPU: time.Duration(utime+stime) * 10 * time.Millisecond} // USER_HZ is 100 on Linux
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		for key, into := range map[string]*int64{"VmRSS:": &u.RSS, "VmHWM:": &u.HWM} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				*into = kb << 10
			}
		}
	}
	return u
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// apiMetrics is one scrape of the API server's /metrics.
type apiMetrics string

func scrapeAPIServer(t *testing.T, admin *rest.Config) apiMetrics {
	t.Helper()
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return apiMetrics(body)
}

// sum adds the samples of metric whose labels contain every one of labels
// (`resource="configmaps"`, …).
func (m apiMetrics) sum(metric string, labels ...string) float64 {
	total := 0.0
	s := bufio.NewScanner(strings.NewReader(string(m)))
	s.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			total += v
		}
	}
	return total
}

// apiCost is what the API server spent between two readings.
type apiCost struct {
	usage   procUsage
	metrics apiMetrics
}

func readCost(t *testing.T, pid int, admin *rest.Config) apiCost {
	t.Helper()
	return apiCost{usage: readProc(t, pid), metrics: scrapeAPIServer(t, admin)}
}

// watches is the number of watches the API server serves on ConfigMaps
// and PDPairs (apiserver_longrunning_requests; this version no longer
// exports the watch cache's apiserver_registered_watchers).
func (c apiCost) watches() string {
	long := func(res string) float64 {
		return c.metrics.sum("apiserver_longrunning_requests", `verb="WATCH"`, `resource="`+res+`"`)
	}
	return fmt.Sprintf("%.0f watches on ConfigMaps and %.0f on PDPairs", long("configmaps"), long("pdpairs"))
}

// watchBytes is the bytes of watch events the API server sent since
// before (apiserver_watch_events_sizes, the encoded events) and their count.
func (c apiCost) watchBytes(before apiCost) (bytes, events float64) {
	d := func(m string) float64 { return c.metrics.sum(m) - before.metrics.sum(m) }
	return d("apiserver_watch_events_sizes_sum"), d("apiserver_watch_events_total")
}

// listBytes is the bytes of LIST and GET responses since before
// (apiserver_response_sizes).
func (c apiCost) listBytes(before apiCost) float64 {
	d := func(verb string) float64 {
		return c.metrics.sum("apiserver_response_sizes_sum", `verb="`+verb+`"`) - before.metrics.sum("apiserver_response_sizes_sum", `verb="`+verb+`"`)
	}
	return d("LIST") + d("GET")
}
