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

package localcp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// roomTable is one line per prefill instance and decode pod: rooms, how
// many ended as wanted; under it the others by failure code, each with
// its last message.
func roomTable(rooms []RoomCount) string {
	var b strings.Builder
	for _, c := range rooms {
		fmt.Fprintf(&b, "  %-3s → %-32s %4d rooms: ", c.Prefill, c.Pod+" ("+c.Decode+")", c.Rooms())
		if c.Expect == "ok" {
			fmt.Fprintf(&b, "%d ok", c.OK)
		} else {
			fmt.Fprintf(&b, "%d refused with %s as wanted", c.Refused, c.Expect)
		}
		if bad := c.Bad(); bad > 0 && c.Expect == "ok" {
			fmt.Fprintf(&b, ", %d failed", bad)
		} else if bad > 0 {
			fmt.Fprintf(&b, ", %d not", bad)
		}
		b.WriteString("\n")
		if c.Expect != "ok" && c.Refused > 0 {
			fmt.Fprintf(&b, "        %s: %s\n", c.Expect, truncate(c.Messages[c.Expect], 400))
		}
		for _, f := range failures(c) {
			fmt.Fprintf(&b, "        %s\n", f)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// failures names the rooms that did not end as wanted: "Code=n: last message".
func failures(c RoomCount) []string {
	var out []string
	for _, code := range slices.Sorted(maps.Keys(c.Failed)) {
		out = append(out, fmt.Sprintf("%s=%d: %s", code, c.Failed[code], truncate(c.Messages[code], 300)))
	}
	if c.Expect != "ok" && c.OK > 0 {
		out = append(out, fmt.Sprintf("succeeded=%d", c.OK))
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// printSummary is the one-screen end: the steps' generations, the rooms,
// the verdict.
func (r *rollout) printSummary(rep *RolloutReport) {
	r.printf("\n== rollout summary (%s)\n", rep.Runtime.Round(100*time.Millisecond))
	for _, s := range rep.Steps {
		r.printf("  %s: generations %s\n     %s\n", s.Name, strings.Join(s.Generations, ", "), truncate(s.RolloutCompatible, 150))
	}
	r.printf("rooms (prefill instance → decode pod), every 200 ms per pod:\n%s\n", roomTable(rep.Rooms))
	if len(rep.Problems) == 0 {
		r.printf("PASS: every room that should succeed did, and the prefill of a layout the pair never had was refused\n")
		return
	}
	r.printf("FAIL:\n  %s\n", strings.Join(rep.Problems, "\n  "))
}
