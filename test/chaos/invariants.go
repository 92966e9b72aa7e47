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
	"sort"
	"strings"
	"time"
)

const (
	// calmBefore: rooms opened this long after the last fault must succeed.
	calmBefore = 10 * time.Second
	// rssLimitKiB bounds the agent's resident memory through the run.
	rssLimitKiB = 256 << 10
)

// summary is what a run did, printed at its end and recorded in
// docs/benchmarks.md.
type summary struct {
	Rooms, Succeeded, Hung, WrongSuccesses, Traps int
	FailedBy                                      map[string]int
	CalmRooms, CalmFailed                         int
	PeakRSSKiB                                    int64
	// Recovery is how long after the last fault the last room that did
	// not succeed was opened (0: none failed after it).
	Recovery time.Duration
}

func (s summary) String() string {
	codes := make([]string, 0, len(s.FailedBy))
	for c, n := range s.FailedBy {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(codes)
	return fmt.Sprintf("rooms %d, succeeded %d, failed by reason [%s], hung %d, wrong successes %d (of %d trap rooms), "+
		"%d rooms opened %v into the calm of which %d did not succeed, peak agent RSS %.1f MiB, recovery %v",
		s.Rooms, s.Succeeded, strings.Join(codes, ", "), s.Hung, s.WrongSuccesses, s.Traps,
		s.CalmRooms, calmBefore, s.CalmFailed, float64(s.PeakRSSKiB)/1024, s.Recovery.Round(10*time.Millisecond))
}

// Reporter is what check reports a broken invariant to: a *testing.T fails
// the run; the reference run (conformance/tokenspeed/chaos) only counts.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// check holds the rooms to the suite's invariants, failing t for each
// broken one:
//   - every room ends Success or Failed (none Hung: the driver gives up on
//     a room open past the documented timeouts, hangAfter);
//   - a Failed room carries a code and a message;
//   - a trap room (one of its two prefill ranks stayed silent) never
//     succeeds: Success only when every planned prefill rank delivered;
//   - every room but a trap room opened calmBefore after the last fault
//     succeeds;
//   - the agent's RSS stays under rssLimitKiB.
func check(t Reporter, lines []roomLine, lastFault time.Time, peakRSS int64) summary {
	t.Helper()
	s := summary{FailedBy: map[string]int{}, PeakRSSKiB: peakRSS}
	calm := float64(lastFault.Add(calmBefore).UnixNano()) / 1e9
	last := float64(lastFault.UnixNano()) / 1e9
	var latestBad float64
	report := map[string]int{}
	fail := func(kind string, format string, args ...any) {
		if report[kind]++; report[kind] <= 5 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range lines {
		s.Rooms++
		trap := isTrap(r.Room)
		if trap {
			s.Traps++
		}
		switch r.Status {
		case "Success":
			s.Succeeded++
			if trap {
				s.WrongSuccesses++
				fail("wrong", "room %d (engine rank %d) succeeded though prefill rank %d never answered it", r.Room, r.Rank, trapSilentRank(r.Rank))
			}
		case "Failed":
			s.FailedBy[r.Code]++
			if r.Code == "" || r.Message == "" {
				fail("reason", "room %d failed without a code and a reason: code %q message %q", r.Room, r.Code, r.Message)
			}
		default:
			s.Hung++
			fail("hung", "room %d (engine rank %d) still %s %.1fs after it opened: past the timeouts", r.Room, r.Rank, r.Message, r.Ended-r.Opened)
		}
		if trap {
			continue
		}
		if r.Status != "Success" && r.Opened > last && r.Opened > latestBad {
			latestBad = r.Opened
		}
		if r.Opened >= calm {
			s.CalmRooms++
			if r.Status != "Success" {
				s.CalmFailed++
				fail("calm", "room %d (engine rank %d) opened %.1fs after the last fault ended %s %s: %s", r.Room, r.Rank, r.Opened-last, r.Status, r.Code, r.Message)
			}
		}
	}
	if latestBad > 0 {
		s.Recovery = time.Duration((latestBad - last) * float64(time.Second))
	}
	for kind, n := range report {
		if n > 5 {
			t.Errorf("… and %d more rooms breaking the same invariant (%s)", n-5, kind)
		}
	}
	if s.CalmRooms == 0 {
		t.Errorf("no room opened %v after the last fault: the calm checks nothing", calmBefore)
	}
	if peakRSS > rssLimitKiB {
		t.Errorf("the agent's RSS peaked at %d KiB, over %d KiB", peakRSS, rssLimitKiB)
	}
	return s
}
