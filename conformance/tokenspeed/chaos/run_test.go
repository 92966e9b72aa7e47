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

package refchaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/chaos"
)

// refRun is one run of the schedule against the reference receiver: the
// suite's prefill process and four refdriver.py engine ranks, as
// test/chaos's TestChaos runs the agent and driver.py.
type refRun struct {
	t                    *testing.T
	dir, root, bootstrap string
	duration             time.Duration
	start                time.Time

	prefill      *chaos.Proc
	prefillLines chan string
	drivers      []*chaos.Proc
	gens         []int
	driverEnv    []string
	python       string

	got     *rooms
	peakRSS int64
}

func newRefRun(t *testing.T, env string, duration time.Duration) *refRun {
	// kept after the run: the rooms and every process's log are the record
	dir, err := os.MkdirTemp("", "pdtopo-refchaos-")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record, err := os.Create(filepath.Join(dir, "rooms.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = record.Close() })
	port := chaos.FreePort(t)
	r := &refRun{t: t, dir: dir, root: root, bootstrap: fmt.Sprintf("127.0.0.1:%d", port), duration: duration,
		prefillLines: make(chan string, 16), drivers: make([]*chaos.Proc, chaos.Ranks), gens: make([]int, chaos.Ranks),
		// the reference's settings for the agent's timeouts; it has no
		// bootstrap timeout and no HTTP timeout on its parallel-info request
		driverEnv: []string{"PYTHONPATH=" + env,
			fmt.Sprintf("TOKENSPEED_DISAGGREGATION_WAITING_TIMEOUT=%d", int(chaos.WaitingTimeout.Seconds())),
			fmt.Sprintf("TOKENSPEED_DISAGGREGATION_HEARTBEAT_INTERVAL=%g", chaos.HeartbeatInterval.Seconds())},
		python: os.Getenv("PYTHON"), got: &rooms{done: map[int]int{}, record: record}}
	if r.python == "" {
		r.python = "/usr/bin/python3"
	}
	pair := filepath.Join(root, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	r.prefill = chaos.NewProc(t, dir, "prefill", []string{chaos.PrefillEnv + "=" + strconv.Itoa(port), "PDTOPO_CHAOS_PAIR=" + pair},
		func(l string) { r.prefillLines <- l }, self)
	r.startPrefill()
	t.Cleanup(r.prefill.Kill)
	t.Cleanup(func() {
		for _, d := range r.drivers {
			if d != nil {
				d.Kill()
			}
		}
	})
	r.start = time.Now()
	return r
}

func (r *refRun) startPrefill() {
	r.prefill.Start(r.t)
	chaos.PrefillReady(r.t, r.prefillLines)
}

// startDriver starts engine rank rank's next driver generation, for what
// is left of the run.
func (r *refRun) startDriver(rank int) {
	left := r.duration - time.Since(r.start)
	r.drivers[rank] = chaos.NewProc(r.t, r.dir, fmt.Sprintf("engine-%d-%d", rank, r.gens[rank]), r.driverEnv, r.got.add, r.python,
		filepath.Join(r.root, "conformance", "tokenspeed", "chaos", "refdriver.py"), fmt.Sprintf("--rank=%d", rank),
		"--bootstrap="+r.bootstrap, fmt.Sprintf("--rate=%d", chaos.RatePerRank),
		fmt.Sprintf("--inflight=%d", chaos.InflightPerRank), fmt.Sprintf("--seconds=%.3f", left.Seconds()),
		fmt.Sprintf("--hang=%.0f", chaos.HangAfter.Seconds()), fmt.Sprintf("--first-room=%d", chaos.RoomBase(rank, r.gens[rank])))
	r.drivers[rank].Start(r.t)
}

// sleepUntil waits until at after the start, sampling the engine ranks'
// RSS: the receiver lives in the engine's process.
func (r *refRun) sleepUntil(at time.Duration) {
	for time.Since(r.start) < at {
		for _, d := range r.drivers {
			if d != nil {
				r.peakRSS = max(r.peakRSS, chaos.RSSKiB(d.Pid()))
			}
		}
		time.Sleep(100 * time.Millisecond) // the RSS sampling pace, not a wait on a condition
	}
}

// apply injects fault f as TestChaos does, and holds it.
func (r *refRun) apply(f chaos.Fault) {
	switch f.Kind {
	case chaos.AgentKill:
		// the reference receiver is a part of the engine's process: no
		// process of its own to kill; the schedule's time passes
		r.t.Logf("        no equivalent: the receiver lives in the engine's process")
		r.sleepUntil(f.At + f.Hold)
	case chaos.PrefillStop:
		r.prefill.Signal(syscall.SIGSTOP)
		r.sleepUntil(f.At + f.Hold)
		r.prefill.Signal(syscall.SIGCONT)
	case chaos.PrefillMove:
		r.prefill.Kill()
		r.startPrefill()
	case chaos.BootstrapDown:
		r.prefill.Kill()
		r.sleepUntil(f.At + f.Hold)
		r.startPrefill()
	case chaos.EngineRestart:
		r.drivers[f.Rank].Kill()
		r.gens[f.Rank]++
		r.startDriver(f.Rank)
	}
}
