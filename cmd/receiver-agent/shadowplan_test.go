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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// shadowFragment is one attack on decode TP rank 1's plan of
// FragmentedP8D4: its target prefill TP rank 3, fragment 1 (target_v
// buffer 2, 128 bytes into offset 128 of a 256-byte decode item) is made
// to write elsewhere.
type shadowFragment struct {
	name string
	mut  func(f *transferplan.TransferFragment)
	// want is the start of the refusal, as /v1/agent's planError shows it.
	want string
}

var shadowFragments = []shadowFragment{
	{"buffer 7 of 4", func(f *transferplan.TransferFragment) { f.BufferIndex = 7 },
		"engine rank 1: FragmentOutOfBounds: BufferIndexOutOfRange: decode TP rank 1, prefill TP rank 3, fragment 1 (target_v buffer 7): buffer_index 7 is outside the plan layout's 4 KV buffers"},
	{"1 TiB into a 256-byte item", func(f *transferplan.TransferFragment) { f.DstByteOffset = 1 << 40 },
		"engine rank 1: FragmentOutOfBounds: OutsideItem: decode TP rank 1, prefill TP rank 3, fragment 1 (target_v buffer 2): dst_byte_offset 1099511627776 + bytes_per_page 128 > dst_page_stride_bytes 256"},
	{"negative stride", func(f *transferplan.TransferFragment) { f.DstPageStrideBytes = -256 },
		"engine rank 1: FragmentOutOfBounds: StrideMismatch: decode TP rank 1, prefill TP rank 3, fragment 1 (target_v buffer 2): src_page_stride_bytes 128 and dst_page_stride_bytes -256"},
}

// shadowSet is FragmentedP8D4's plan set with one fragment changed: a
// publication that hashes and decodes cleanly (whoever wrote it knew the
// format), so only the fragment check can refuse it.
func shadowSet(t *testing.T, mut func(f *transferplan.TransferFragment)) *transferplan.PlanSet {
	t.Helper()
	set := fixtures.MustPlan(fixtures.FragmentedP8D4())
	target := &set.Plans[1].Targets[1]
	if f := target.Fragments[1]; target.PrefillTPRank != 3 || f.BufferIndex != 2 || f.DstByteOffset != 128 {
		t.Fatalf("fixture changed: decode TP rank 1's target %d fragment 1 is %+v", target.PrefillTPRank, f)
	}
	mut(&target.Fragments[1])
	return set
}

func encodeShadow(t *testing.T, set *transferplan.PlanSet) []planstore.Object {
	t.Helper()
	objects, err := planstore.Encode("pair", set)
	if err != nil {
		t.Fatalf("encoding the shadow plans: %v", err)
	}
	return objects
}

// noFragmentReachedThePeer fails if any prefill rank received a fragment
// its own layout refuses (the peer checks every fragment as the reference
// would execute it).
func noFragmentReachedThePeer(t *testing.T, peer *prefillpeer.Peer) {
	t.Helper()
	for _, r := range peer.Ranks() {
		if errs := r.Errors(); len(errs) > 0 {
			t.Fatalf("prefill engine rank %d received what it should never have: %v", r.EngineRank, errs[0])
		}
	}
}

// Plans with out-of-bounds fragments projected into a running agent's plan
// directory (a shadow ConfigMap, a compromised writer): each is refused with
// its code, rank, buffer and numbers; the agent keeps the last good plan,
// stays ready, and its rooms keep completing on it; no refused byte
// reaches a prefill rank.
func TestShadowPlanWithOutOfBoundsFragmentsIsRefused(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 2, "--plan-dir", dir)
	register(t, a.rank(1), l, 1)

	for i, attack := range shadowFragments {
		t.Run(attack.name, func(t *testing.T) {
			shadow := shadowSet(t, attack.mut)
			receivertest.ProjectPlans(t, dir, 2+i, encodeShadow(t, shadow))
			info := a.waitInfo(t, "the refusal", func(i map[string]any) bool { return i["planError"] != "" })
			if got := fmt.Sprint(info["planError"]); info["planHash"] != hash || info["ready"] != true || !strings.HasPrefix(got, attack.want) {
				t.Fatalf("/v1/agent after the shadow plan %s: %v\nwant plan %s kept, ready, and planError starting %q", shadow.Hash(), info, hash, attack.want)
			}
			if v := a.metric(t, `pdtopo_receiver_plan_load_failures_total{stage="refused"}`); v != fmt.Sprint(i+1) {
				t.Fatalf("refusals counted %q, want %d", v, i+1)
			}
			if got := roomThroughAPI(t, a.rank(1), peer.BootstrapAddr(), int64(10+i)); got.Status != receiver.Success {
				t.Fatalf("a room on the kept plan: %+v", got)
			}
			noFragmentReachedThePeer(t, peer)
			receivertest.ProjectPlans(t, dir, 100+i, objects) // the good plans back
			a.waitInfo(t, "the good plans back", func(i map[string]any) bool { return i["planError"] == "" })
		})
	}
}

// An agent that starts next to a shadow plan never runs it: it stays
// unready, refuses rooms, and says why.
func TestAgentStartingNextToAShadowPlanStaysUnready(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	dir := t.TempDir()
	receivertest.ProjectPlans(t, dir, 1, encodeShadow(t, shadowSet(t, shadowFragments[0].mut)))
	a := startAgent(t, 0, 2, "--plan-dir", dir)
	info := a.waitInfo(t, "the refusal", func(i map[string]any) bool { return i["planError"] != "" })
	if info["planHash"] != "" || info["ready"] != false || !strings.HasPrefix(fmt.Sprint(info["planError"]), shadowFragments[0].want) {
		t.Fatalf("/v1/agent next to a shadow plan: %v", info)
	}
	call(t, http.DefaultClient, "GET", a.probe+"/readyz", "", 503)
	_, err := a.rank(1).Open(t.Context(), peer.BootstrapAddr(), 1)
	_ = refused(t, err, 503, "NoPlanLoaded")
	for _, r := range peer.Ranks() {
		if c := r.Counts(); c.Registrations+c.Requests > 0 {
			t.Fatalf("prefill engine rank %d heard from the agent: %+v", r.EngineRank, c)
		}
	}
}

// --plan-file and --print-plan refuse such a plan outright.
func TestPlanFileWithOutOfBoundsFragmentsIsRefused(t *testing.T) {
	raw, err := json.Marshal(shadowSet(t, shadowFragments[1].mut))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "plan file " + file + ": " + shadowFragments[1].want
	for _, extra := range [][]string{nil, {"--print-plan"}} {
		args := append([]string{"--first-rank=0", "--rank-count=2", "--socket-dir", t.TempDir(), "--plan-file", file}, extra...)
		// an agent that took the plan would serve until the context ends
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		err := run(ctx, args, io.Discard, io.Discard)
		cancel()
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("receiver-agent %v: %v, want an error starting %q", extra, err, want)
		}
	}
}
