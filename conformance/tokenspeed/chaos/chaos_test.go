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

// Package refchaos runs test/chaos's seeded fault schedule against
// tokenspeed's own decode receiver (refdriver.py) instead of pdtopo's agent:
// the same prefill process, seeds, trap rooms, rates and invariants. Local
// only: run.sh builds the engine's modules and sets TOKENSPEED_CHAOS_ENV;
// without it the test skips.
package refchaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/chaos"
)

// envDir names the tokenspeed-env directory (env.sh) the drivers import.
const envDir = "TOKENSPEED_CHAOS_ENV"

func TestMain(m *testing.M) {
	if chaos.PrefillMain() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// logged reports broken invariants without failing the run: the figures
// are the point, and the reference is expected to break some.
type logged struct{ t *testing.T }

func (logged) Helper() {}
func (l logged) Errorf(format string, args ...any) {
	l.t.Logf("broken invariant: "+format, args...)
}

// rooms collects what the drivers printed.
type rooms struct {
	mu     sync.Mutex
	lines  []chaos.RoomLine
	done   map[int]int
	wedged int
	stall  float64
	// openAtEnd: rooms the last drivers' receivers still held open at exit
	openAtEnd int
	record    *os.File
}

// doneLine is refdriver.py's last line.
type doneLine struct {
	StallS    float64 `json:"stall_s"`
	OpenAtEnd int     `json:"open_at_end"`
}

func (r *rooms) add(line string) {
	rl, ok := chaos.DecodeRoom(line)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = fmt.Fprintln(r.record, line)
	if rl.Done {
		r.done[rl.Rank]++
		if strings.Contains(line, `"wedged": true`) {
			r.wedged++
		}
		var d doneLine
		if json.Unmarshal([]byte(line), &d) == nil {
			r.stall = max(r.stall, d.StallS)
			r.openAtEnd += d.OpenAtEnd
		}
		return
	}
	r.lines = append(r.lines, rl)
}

func TestReferenceReceiverChaos(t *testing.T) {
	env := os.Getenv(envDir)
	if env == "" {
		t.Skipf("%s is unset: run conformance/tokenspeed/chaos/run.sh TOKENSPEED_GIT_DIR", envDir)
	}
	duration, seed := chaos.RunParams(t)
	plan := chaos.Schedule(seed, duration)
	t.Logf("seed %d, %v: %d faults", seed, duration, len(plan))
	for _, f := range plan {
		t.Logf("  %v", f)
	}
	// kept after the run: the rooms and every process's log are the record
	dir, err := os.MkdirTemp("", "pdtopo-refchaos-")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	pair := filepath.Join(root, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	port := chaos.FreePort(t)
	bootstrap := fmt.Sprintf("127.0.0.1:%d", port)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prefillLines := make(chan string, 16)
	prefill := chaos.NewProc(t, dir, "prefill", []string{chaos.PrefillEnv + "=" + strconv.Itoa(port), "PDTOPO_CHAOS_PAIR=" + pair},
		func(l string) { prefillLines <- l }, self)
	startPrefill := func() { prefill.Start(t); chaos.PrefillReady(t, prefillLines) }
	startPrefill()
	t.Cleanup(prefill.Kill)

	record, err := os.Create(filepath.Join(dir, "rooms.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = record.Close() })
	got := &rooms{done: map[int]int{}, record: record}
	// the reference's settings for the agent's timeouts; it has no
	// bootstrap timeout and no HTTP timeout on its parallel-info request
	driverEnv := []string{"PYTHONPATH=" + env,
		fmt.Sprintf("TOKENSPEED_DISAGGREGATION_WAITING_TIMEOUT=%d", int(chaos.WaitingTimeout.Seconds())),
		fmt.Sprintf("TOKENSPEED_DISAGGREGATION_HEARTBEAT_INTERVAL=%g", chaos.HeartbeatInterval.Seconds())}
	python := os.Getenv("PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	start := time.Now()
	drivers := make([]*chaos.Proc, chaos.Ranks)
	gens := make([]int, chaos.Ranks)
	startDriver := func(r int) {
		left := duration - time.Since(start)
		drivers[r] = chaos.NewProc(t, dir, fmt.Sprintf("engine-%d-%d", r, gens[r]), driverEnv, got.add, python,
			filepath.Join(root, "conformance", "tokenspeed", "chaos", "refdriver.py"), fmt.Sprintf("--rank=%d", r),
			"--bootstrap="+bootstrap, fmt.Sprintf("--rate=%d", chaos.RatePerRank),
			fmt.Sprintf("--inflight=%d", chaos.InflightPerRank), fmt.Sprintf("--seconds=%.3f", left.Seconds()),
			fmt.Sprintf("--hang=%.0f", chaos.HangAfter.Seconds()), fmt.Sprintf("--first-room=%d", chaos.RoomBase(r, gens[r])))
		drivers[r].Start(t)
	}
	for r := range chaos.Ranks {
		startDriver(r)
	}
	t.Cleanup(func() {
		for _, d := range drivers {
			d.Kill()
		}
	})

	// the receiver lives in the engine's process: its RSS is the driver's
	var peakRSS int64
	sleepUntil := func(at time.Duration) {
		for time.Since(start) < at {
			for _, d := range drivers {
				peakRSS = max(peakRSS, chaos.RSSKiB(d.Pid()))
			}
			time.Sleep(100 * time.Millisecond) // the RSS sampling pace, not a wait on a condition
		}
	}
	var lastFault time.Time
	for _, f := range plan {
		sleepUntil(f.At)
		t.Logf("%6.1fs %v", time.Since(start).Seconds(), f)
		switch f.Kind {
		case chaos.AgentKill:
			// the reference receiver is a part of the engine's process: no
			// process of its own to kill; the schedule's time passes
			t.Logf("        no equivalent: the receiver lives in the engine's process")
			sleepUntil(f.At + f.Hold)
		case chaos.PrefillStop:
			prefill.Signal(syscall.SIGSTOP)
			sleepUntil(f.At + f.Hold)
			prefill.Signal(syscall.SIGCONT)
		case chaos.PrefillMove:
			prefill.Kill()
			startPrefill()
		case chaos.BootstrapDown:
			prefill.Kill()
			sleepUntil(f.At + f.Hold)
			startPrefill()
		case chaos.EngineRestart:
			drivers[f.Rank].Kill()
			gens[f.Rank]++
			startDriver(f.Rank)
		}
		lastFault = time.Now()
	}
	sleepUntil(duration)
	for r, d := range drivers {
		// a wedged driver reports itself 2×hang after its run
		if !d.Wait(2*chaos.HangAfter + 10*time.Second) {
			t.Errorf("engine rank %d's driver did not finish", r)
		}
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	s := chaos.Check(logged{t}, got.lines, lastFault, peakRSS)
	// the receiver has no process of its own: its RSS is its engine rank's
	t.Logf("reference receiver: %s", strings.Replace(s.String(), "peak agent RSS", "peak engine rank (receiver) RSS", 1))
	t.Logf("reference receiver: %d rooms still open in the receivers at the end, "+
		"%d engine ranks wedged at the end, longest single receiver call %.2f s",
		got.openAtEnd, got.wedged, got.stall)
	t.Logf("rooms.log and the processes' logs: %s", dir)
	// the harness itself must work: the reference and the prefill talk
	if s.Succeeded == 0 {
		t.Errorf("no room succeeded: the reference receiver and the prefill never talked; see %s", dir)
	}
	for r := range chaos.Ranks {
		if got.done[r] != 1 {
			t.Errorf("engine rank %d: %d of its last driver's runs finished (want 1)", r, got.done[r])
		}
	}
}
