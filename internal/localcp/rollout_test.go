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
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRolloutScenario is `make rollout-demo` end to end on the real local
// control plane (etcd, kube-apiserver, the manager and its webhook from
// this tree, the agent and prefill-peer binaries): a prefill rollout, a
// decode rollout, the old instances stopped. Every step's generations and
// condition, and every (prefill, decode pod) room count, are checked
// against what the rollout must give.
func TestRolloutScenario(t *testing.T) {
	o := testOptions(t)
	o.ManagerPath = buildManager(t)
	if o.ManagerPath == "" {
		t.Skip("no cmd/manager")
	}
	o.PeerPath, o.AgentPath = buildCmd(t, "prefill-peer"), buildCmd(t, "receiver-agent")
	// A random loopback address: the agents' probe port is the fixed 9440.
	o.PodIP = fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), 1+rand.IntN(254), 1+rand.IntN(250))
	const rooms = 5
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	began := time.Now()
	report, err := Rollout(ctx, RolloutOptions{
		Options:      o,
		PairFile:     filepath.Join(repoRoot, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml"),
		PodFile:      filepath.Join(repoRoot, "config", "samples", "decode", "pod.yaml"),
		RoomsPerStep: rooms,
		Out:          testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rollout scenario ran in %s", time.Since(began).Round(time.Second))
	checkSteps(t, report.Steps)
	checkRooms(t, report.Rooms, rooms)
}

func checkSteps(t *testing.T, steps []RolloutStep) {
	t.Helper()
	want := []struct {
		name, rollout string
		generations   []string
	}{
		{"a", "RolloutCompatible: True/OneGeneration", []string{"P8×D4 current"}},
		{"b", "RolloutCompatible: True/GenerationsCompatible", []string{"P4×D4 current", "P8×D4"}},
		{"c", "RolloutCompatible: True/GenerationsCompatible", []string{"P4×D2 current", "P4×D4", "P8×D4"}},
		// The old pod and P8 prefills gone: the old generations are kept
		// for their grace (5 minutes), unused.
		{"d", "RolloutCompatible: True/GenerationsCompatible", []string{"P4×D2 current", "P4×D4", "P8×D4"}},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, w := range want {
		s := steps[i]
		if s.Name != w.name || !slices.Equal(s.Generations, w.generations) || !strings.HasPrefix(s.RolloutCompatible, w.rollout) {
			t.Errorf("step %s: generations %q, %s; want %q, %s", s.Name, s.Generations, s.RolloutCompatible, w.generations, w.rollout)
		}
		if !strings.HasPrefix(s.PlansPublished, "PlansPublished: True/") {
			t.Errorf("step %s: %s", s.Name, s.PlansPublished)
		}
	}
	// Each generation of an older layout is published beside the current
	// one, and so is the cross pair P8 × D2 no generation had.
	if !strings.Contains(steps[2].PlansPublished, "3 earlier plan sets still published") {
		t.Errorf("step c: %s, want the two D4 generations' sets and the P8 × D2 cross pair's still published", steps[2].PlansPublished)
	}
}

// checkRooms: every pair of a prefill instance and a decode pod that
// should serve did, at least rooms per step it ran; the P2 prefill was
// refused, naming the layouts served.
func checkRooms(t *testing.T, got []RoomCount, rooms int64) {
	t.Helper()
	const old, neu = "llama3-70b-decode-demo", "llama3-70b-decode-demo-tp2"
	want := []struct {
		prefill, pod, expect string
		atLeast              int64 // rooms ended as expected
	}{
		{"P8", old, "ok", 3 * rooms}, // steps a, b, c
		{"P4", old, "ok", 2 * rooms}, // b, c
		{"P2", old, "LayoutMismatch", 3},
		{"P4", neu, "ok", 2 * rooms}, // c, d
		{"P8", neu, "ok", rooms},     // c: a cross pair no generation had
	}
	if len(got) != len(want) {
		t.Fatalf("%d (prefill, decode pod) pairs had rooms, want %d:\n%s", len(got), len(want), roomTable(got))
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(c RoomCount) bool { return c.Prefill == w.prefill && c.Pod == w.pod })
		if i < 0 {
			t.Errorf("no rooms %s → %s", w.prefill, w.pod)
			continue
		}
		c := got[i]
		ended := c.Refused // the scenario checked the refusal's message
		if w.expect == "ok" {
			ended = c.OK
		}
		if ended < w.atLeast || ended != c.Rooms() {
			t.Errorf("%s → %s: %d of %d rooms ended in %s, want all and at least %d:\n%s", w.prefill, w.pod, ended, c.Rooms(), w.expect, w.atLeast, roomTable([]RoomCount{c}))
		}
	}
}

// TestRoomProblems: which counts fail the scenario.
func TestRoomProblems(t *testing.T) {
	ok := func(n int64) RoomCount {
		return RoomCount{Prefill: "P8", Pod: "p", Expect: "ok", OK: n, Failed: map[string]int64{}}
	}
	withFailed := func(c RoomCount, code string, n int64) RoomCount {
		c.Failed = map[string]int64{code: n}
		return c
	}
	refusal := RoomCount{Prefill: "P2", Pod: "p", Expect: "LayoutMismatch", Failed: map[string]int64{}}
	refused, refusedOK := refusal, refusal
	refused.Refused = 3
	refusedOK.Refused, refusedOK.OK = 2, 1
	for _, tc := range []struct {
		name string
		in   RoomCount
		want string // "" for no problem
	}{
		{"all ok", ok(10), ""},
		{"one failed", withFailed(ok(9), "WrongBytes", 1), "1 of 10 rooms did not end in ok: WrongBytes=1"},
		{"no room", ok(0), "no room ended"},
		{"refused as wanted", refused, ""},
		{"a refusal that succeeded", refusedOK, "1 of 3 rooms did not end in LayoutMismatch: succeeded=1"},
		{"never refused", refusal, "no room was refused with LayoutMismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := roomProblems([]RoomCount{tc.in})
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("problems %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("problems %q, want one saying %q", got, tc.want)
			}
		})
	}
}
