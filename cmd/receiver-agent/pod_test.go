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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// TestAgentServesEveryRankOfThePod runs one agent for engine ranks 2 and 3
// of a P8→D4 pair, as a decode pod hosting half an instance would: the
// same room (every decode rank of an instance opens the request's room)
// completes on both ranks at once, each through its own socket and status
// socket, and the probe address reports the pod.
func TestAgentServesEveryRankOfThePod(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(77, prefillpeer.Success(5))
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 2, 2, "--plan-dir", dir)

	for _, r := range []int{2, 3} {
		path := filepath.Join(a.socketDir, fmt.Sprintf("rank-%d.sock", r))
		if st, err := os.Stat(path); err != nil || st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != socketDirMode {
			t.Fatalf("rank %d's socket %s: %v (%v), want a socket with mode %o", r, path, st.Mode(), err, socketDirMode)
		}
		register(t, a.rank(r), l, r)
	}
	var wg sync.WaitGroup
	got := make([]agentclient.Room, 2)
	for i, r := range []int{2, 3} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = roomThroughAPI(t, a.rank(r), peer.BootstrapAddr(), 77)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g.Status != receiver.Success || g.BootstrapToken != 5 {
			t.Fatalf("room 77 on engine rank %d: %+v", 2+i, g)
		}
	}
	// each rank registered its own status socket with the prefill ranks it pulls from
	ports := map[int]bool{}
	for _, rank := range peer.Ranks() {
		for _, reg := range rank.Registrations() {
			ports[reg.DecodeStatusPort] = true
		}
	}
	if len(ports) != 2 {
		t.Fatalf("the prefill ranks saw status ports %v, want one per engine rank", ports)
	}

	info := a.info(t)
	loadedAt, _ := time.Parse(time.RFC3339, fmt.Sprint(info["planLoadedAt"]))
	if info["planHash"] != hash || info["pdpair"] != "pair" || fmt.Sprint(info["ranks"]) != "[2 3]" || info["ready"] != true ||
		info["planError"] != "" || time.Since(loadedAt) > time.Minute {
		t.Fatalf("/v1/agent: %v, want plan %s of pair for ranks [2 3], ready, loaded just now", info, hash)
	}
	call(t, http.DefaultClient, "GET", a.probe+"/readyz", "", 200)
	call(t, http.DefaultClient, "GET", a.probe+"/healthz", "", 200)
	for _, r := range []string{"2", "3"} {
		if v := a.metric(t, `pdtopo_receiver_rooms_total{engine_rank="`+r+`",outcome="success"}`); v != "1" {
			t.Errorf("engine rank %s's successful rooms on the probe address: %q, want 1", r, v)
		}
	}
	// the engine API is never on the probe address
	if got := call(t, http.DefaultClient, "POST", a.probe+"/v1/rooms", `{"bootstrapAddr":"127.0.0.1:1","room":1}`, 404); !strings.Contains(fmt.Sprint(got), "unix sockets") {
		t.Fatalf("the probe address answered the engine API: %v", got)
	}
}

// Ranks a plan does not cover leave the pod unready, and /v1/agent says
// why with the numbers.
func TestAgentRanksPastTheFleetAreNotReady(t *testing.T) {
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 3, 2, "--plan-dir", dir)
	info := a.info(t)
	if info["ready"] != false || info["planHash"] != "" || !strings.Contains(fmt.Sprint(info["planError"]), "engine rank 4 is outside the decode fleet of 4 ranks") {
		t.Fatalf("/v1/agent: %v", info)
	}
	if got := call(t, http.DefaultClient, "GET", a.probe+"/readyz", "", 503); !strings.Contains(fmt.Sprint(got), "NoPlanLoaded") {
		t.Fatalf("/readyz: %v", got)
	}
}
