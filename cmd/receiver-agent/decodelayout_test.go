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
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// TestOldDecodeLayoutAgentRestartsMidRollout is a decode rollout from TP 4
// to TP 2: the agent of an old TP 4 pod (engine ranks 2 and 3) starts
// again after the pair moved to TP 2 and only the TP 2 plans are
// published. It loads nothing and says what it waits for (not
// RankOutOfRange: the pod's ranks exist in its own layout); once the TP 4
// plans are published again it loads them, not the TP 2 ones, and its
// rooms to the P8 prefill succeed.
func TestOldDecodeLayoutAgentRestartsMidRollout(t *testing.T) {
	old := fixtures.FragmentedP8D4()
	next := fixtures.MHA(8, 2, fixtures.Buffers(2, 128, 512, 128))
	dir := t.TempDir()
	nextObjects, nextHash := receivertest.Publish(t, "pair", next)
	receivertest.ProjectPlans(t, dir, 1, nextObjects)

	a := startAgent(t, 2, 2, "--plan-dir", dir, "--decode-layout=tp=4,dp=1")
	info := a.info(t)
	msg := fmt.Sprint(info["planError"])
	for _, want := range []string{"DecodeLayoutNotPublished", "are for decode layout tp=2,dp=1", "admitted under decode layout tp=4,dp=1", "waits for the operator"} {
		if !strings.Contains(msg, want) {
			t.Errorf("/v1/agent planError %q: want it to say %q", msg, want)
		}
	}
	if info["ready"] != false || info["planHash"] != "" || info["decodeLayout"] != "tp=4,dp=1" {
		t.Fatalf("/v1/agent: %v, want unready, no plan, decodeLayout tp=4,dp=1", info)
	}
	call(t, http.DefaultClient, "GET", a.probe+"/readyz", "", 503)
	// An engine of the new layout in this pod (a pod of the new template
	// admitted under the old layout) is refused before any plan is loaded.
	eng := receivertest.Engine(receivertest.Snapshot(t, old, 2), 2)
	eng.TPSize = 2
	ae := refused(t, a.rank(2).RegisterEngine(t.Context(), eng), http.StatusConflict, string(receiver.CodeDecodeLayoutMismatch))
	if !strings.Contains(ae.Message, "says tensor parallel size 2, but its pod was admitted under decode layout tp=4,dp=1") {
		t.Errorf("refusal %q: want both layouts named", ae.Message)
	}

	// The operator publishes the old layout's plans again.
	oldObjects, oldHash := receivertest.Publish(t, "pair", old)
	receivertest.ProjectPlans(t, dir, 2, oldObjects)
	a.waitInfo(t, "the TP 4 plans loaded", func(m map[string]any) bool { return m["planHash"] == oldHash && m["ready"] == true })
	if oldHash == nextHash {
		t.Fatal("the two layouts' plans have one hash; the test cannot tell them apart")
	}

	peer := startPeer(t, old)
	peer.Script(41, prefillpeer.Success(9))
	for _, r := range []int{2, 3} {
		register(t, a.rank(r), old, r)
		if got := roomThroughAPI(t, a.rank(r), peer.BootstrapAddr(), 41); got.Status != receiver.Success || got.BootstrapToken != 9 {
			t.Fatalf("room 41 on engine rank %d: %+v", r, got)
		}
	}
	met := a.info(t)["prefillLayoutsMet"]
	if fmt.Sprint(met) != "[map[instances:1 layout:tp=8,dp=1]]" {
		t.Errorf("/v1/agent prefillLayoutsMet %v, want one P8 instance", met)
	}

	// A layout's plans going away again (the new publication without
	// them) keeps the plan in use and says why.
	receivertest.ProjectPlans(t, dir, 3, nextObjects)
	a.waitInfo(t, "the refusal of the TP 2 plans", func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["planError"]), "DecodeLayoutNotPublished") && m["planHash"] == oldHash && m["ready"] == true
	})
}

// TestEngineTPDisagreeingWithAdmittedLayout: an engine saying another TP
// than the pod's admitted layout (a pod of the old template admitted
// mid-rollout) is refused with 409 naming both; saying the same TP, or
// none, registers.
func TestEngineTPDisagreeingWithAdmittedLayout(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 1, "--plan-dir", dir, "--decode-layout=tp=4,dp=1")
	a.waitInfo(t, "ready", func(m map[string]any) bool { return m["ready"] == true })

	eng := receivertest.Engine(receivertest.Snapshot(t, l, 0), 0)
	eng.TPSize = 2
	ae := refused(t, a.rank(0).RegisterEngine(t.Context(), eng), http.StatusConflict, string(receiver.CodeDecodeLayoutMismatch))
	for _, want := range []string{"tensor parallel size 2", "admitted under decode layout tp=4,dp=1", "tensor parallel size 4"} {
		if !strings.Contains(ae.Message, want) {
			t.Errorf("refusal %q: want it to name %q", ae.Message, want)
		}
	}
	for _, tp := range []int{4, 0} {
		eng.TPSize = tp
		if err := a.rank(0).RegisterEngine(t.Context(), eng); err != nil {
			t.Fatalf("registering with tpSize %d: %v", tp, err)
		}
	}
}

// Without --decode-layout the plan's decode TP is what the engine's is held
// to.
func TestEngineTPDisagreeingWithPlan(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 1, "--plan-dir", dir)
	a.waitInfo(t, "ready", func(m map[string]any) bool { return m["ready"] == true })
	eng := receivertest.Engine(receivertest.Snapshot(t, l, 0), 0)
	eng.TPSize = 8
	ae := refused(t, a.rank(0).RegisterEngine(t.Context(), eng), http.StatusConflict, string(receiver.CodeDecodeLayoutMismatch))
	if !strings.Contains(ae.Message, "tensor parallel size 8") || !strings.Contains(ae.Message, "decode layout tp=4,dp=1") {
		t.Errorf("refusal %q: want both sizes", ae.Message)
	}
}

func TestDecodeLayoutFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--first-rank=2", "--rank-count=2", "--socket-dir=/tmp/x", "--plan-dir=/p", "--decode-layout=tp=2,dp=1"}, "--decode-layout tp=2,dp=1 has engine ranks 0..1 but the agent serves engine ranks 2..3"},
		{[]string{"--engine-rank=0", "--plan-dir=/p", "--decode-layout=tp=4"}, "--decode-layout: layout \"tp=4\" is not of the form"},
		{[]string{"--engine-rank=0", "--plan-file=/p", "--decode-layout=tp=4,dp=1"}, "--decode-layout is read with --plan-dir or --pdpair"},
	}
	for _, c := range cases {
		_, err := parseFlags(c.args, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	o, err := parseFlags([]string{"--first-rank=2", "--rank-count=2", "--socket-dir=/tmp/x", "--plan-dir=/p", "--decode-layout=tp=4,dp=2"}, &strings.Builder{})
	if err != nil || o.decodeLayout == nil || o.decodeLayout.TPSize != 4 || o.decodeLayout.DPSize != 2 {
		t.Fatalf("parseFlags: %+v, %v; want decode layout tp=4,dp=2", o, err)
	}
}
