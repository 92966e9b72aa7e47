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

package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/testutil"
)

func TestMain(m *testing.M) {
	if PrefillMain() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// rooms collects what the drivers printed.
type rooms struct {
	mu    sync.Mutex
	lines []roomLine
	done  map[int]int // driver generation outcomes: rank → "done" lines
	// record gets every line, kept with the logs of a failed run
	record *os.File
}

func (r *rooms) add(line string) {
	rl, ok := decodeRoom(line)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = fmt.Fprintln(r.record, line)
	if rl.Done {
		r.done[rl.Rank]++
		return
	}
	r.lines = append(r.lines, rl)
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos suite runs a minute of faults; -short leaves it out")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatalf("the chaos suite drives rooms through the Python adapter with /usr/bin/python3: %v", err)
	}
	duration, seed := runParams(t)
	plan := Schedule(seed, duration)
	t.Logf("seed %d, %v: %d faults", seed, duration, len(plan))
	for _, f := range plan {
		t.Logf("  %v", f)
	}

	bin := testutil.BuildCommands(t, repoRoot(t), "./cmd/receiver-agent", "./cmd/pdtopo")
	dir := t.TempDir()
	root := repoRoot(t)
	pair := filepath.Join(root, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	plans := testutil.PlanFile(t, bin, pair, dir)
	port := freePort(t)
	bootstrap := fmt.Sprintf("127.0.0.1:%d", port)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prefillLines := make(chan string, 16)
	prefill := newProc(t, dir, "prefill", []string{prefillEnv + "=" + strconv.Itoa(port), "PDTOPO_CHAOS_PAIR=" + pair},
		func(l string) { prefillLines <- l }, self)
	startPrefill := func() { prefill.start(t); prefillReady(t, prefillLines) }
	startPrefill()
	t.Cleanup(prefill.kill)

	sockets := filepath.Join(dir, "sockets")
	if err := os.Mkdir(sockets, 0o700); err != nil {
		t.Fatal(err)
	}
	agent := newProc(t, dir, "agent", nil, nil, filepath.Join(bin, "receiver-agent"),
		"--first-rank=0", fmt.Sprintf("--rank-count=%d", ranks), "--socket-dir="+sockets, "--status-host=127.0.0.1",
		"--plan-file="+plans, "--log-level=warn", "--bootstrap-timeout="+bootstrapTimeout.String(),
		"--waiting-timeout="+waitingTimeout.String(), "--http-timeout="+httpTimeout.String(),
		"--heartbeat-interval="+heartbeatInterval.String())
	agent.start(t)
	t.Cleanup(agent.kill)

	record, err := os.Create(filepath.Join(dir, "rooms.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = record.Close() })
	got := &rooms{done: map[int]int{}, record: record}
	start := time.Now()
	drivers := make([]*proc, ranks)
	gens := make([]int, ranks)
	startDriver := func(r int) {
		left := duration - time.Since(start)
		drivers[r] = newProc(t, dir, fmt.Sprintf("engine-%d-%d", r, gens[r]), nil, got.add, "/usr/bin/python3",
			filepath.Join(root, "test", "chaos", "driver.py"), "--socket-dir="+sockets, fmt.Sprintf("--rank=%d", r),
			"--bootstrap="+bootstrap, "--kv-buffers=160", fmt.Sprintf("--rate=%d", ratePerRank),
			fmt.Sprintf("--inflight=%d", inflightPerRank), fmt.Sprintf("--seconds=%.3f", left.Seconds()),
			fmt.Sprintf("--hang=%.0f", hangAfter.Seconds()), fmt.Sprintf("--first-room=%d", roomBase(r, gens[r])))
		drivers[r].start(t)
	}
	for r := range ranks {
		startDriver(r)
	}
	t.Cleanup(func() {
		for _, d := range drivers {
			d.kill()
		}
	})

	var peakRSS, peakDriverRSS int64
	sampleRSS := func() {
		peakRSS = max(peakRSS, rssKiB(agent.pid()))
		// the engine ranks' processes: beside the reference run, whose
		// receiver lives in them (conformance/tokenspeed/chaos)
		for _, d := range drivers {
			peakDriverRSS = max(peakDriverRSS, rssKiB(d.pid()))
		}
	}
	sleepUntil := func(at time.Duration) {
		for time.Since(start) < at {
			sampleRSS()
			time.Sleep(100 * time.Millisecond) // the RSS sampling pace, not a wait on a condition
		}
	}
	var lastFault time.Time
	for _, f := range plan {
		sleepUntil(f.At)
		t.Logf("%6.1fs %v", time.Since(start).Seconds(), f)
		switch f.Kind {
		case agentKill:
			agent.kill()
			sleepUntil(f.At + f.Hold)
			agent.start(t)
		case prefillStop:
			prefill.signal(syscall.SIGSTOP)
			sleepUntil(f.At + f.Hold)
			prefill.signal(syscall.SIGCONT)
		case prefillMove:
			prefill.kill()
			startPrefill()
		case bootstrapDown:
			prefill.kill()
			sleepUntil(f.At + f.Hold)
			startPrefill()
		case engineRestart:
			drivers[f.Rank].kill()
			gens[f.Rank]++
			startDriver(f.Rank)
		}
		lastFault = time.Now()
	}
	sleepUntil(duration)
	for r, d := range drivers {
		if !d.wait(hangAfter + 10*time.Second) {
			t.Errorf("engine rank %d's driver did not finish", r)
		}
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	s := check(t, got.lines, lastFault, peakRSS)
	t.Log(s)
	t.Logf("peak engine rank (driver.py) RSS %.1f MiB", float64(peakDriverRSS)/1024)
	for r := range ranks {
		if got.done[r] != 1 {
			t.Errorf("engine rank %d: %d of its last driver's runs finished (want 1): see %s", r, got.done[r], dir)
		}
	}
	if t.Failed() {
		keepLogs(t, dir)
	}
}

// keepLogs copies the run's logs where a failed run can be read after.
func keepLogs(t *testing.T, dir string) {
	keep, err := os.MkdirTemp("", "pdtopo-chaos-")
	if err != nil {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		_ = exec.Command("cp", l, keep).Run()
	}
	t.Logf("logs kept in %s", keep)
}
