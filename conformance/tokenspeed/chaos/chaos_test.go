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
	"strings"
	"sync"
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
	r := newRefRun(t, env, duration)
	for rank := range chaos.Ranks {
		r.startDriver(rank)
	}
	var lastFault time.Time
	for _, f := range plan {
		r.sleepUntil(f.At)
		t.Logf("%6.1fs %v", time.Since(r.start).Seconds(), f)
		r.apply(f)
		lastFault = time.Now()
	}
	r.sleepUntil(duration)
	for rank, d := range r.drivers {
		// a wedged driver reports itself 2×hang after its run
		if !d.Wait(2*chaos.HangAfter + 10*time.Second) {
			t.Errorf("engine rank %d's driver did not finish", rank)
		}
	}
	r.report(lastFault)
}

// report logs the run's figures and fails only when the harness itself did
// not work.
func (r *refRun) report(lastFault time.Time) {
	t, got := r.t, r.got
	got.mu.Lock()
	defer got.mu.Unlock()
	s := chaos.Check(logged{t}, got.lines, lastFault, r.peakRSS)
	// the receiver has no process of its own: its RSS is its engine rank's
	t.Logf("reference receiver: %s", strings.Replace(s.String(), "peak agent RSS", "peak engine rank (receiver) RSS", 1))
	t.Logf("reference receiver: %d rooms still open in the receivers at the end, "+
		"%d engine ranks wedged at the end, longest single receiver call %.2f s",
		got.openAtEnd, got.wedged, got.stall)
	t.Logf("rooms.log and the processes' logs: %s", r.dir)
	// the reference and the prefill must have talked
	if s.Succeeded == 0 {
		t.Errorf("no room succeeded: the reference receiver and the prefill never talked; see %s", r.dir)
	}
	for rank := range chaos.Ranks {
		if got.done[rank] != 1 {
			t.Errorf("engine rank %d: %d of its last driver's runs finished (want 1)", rank, got.done[rank])
		}
	}
}
