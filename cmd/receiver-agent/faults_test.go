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
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/prefillpeer"
	"github.com/pdtopo/pdtopo/internal/receiverfixtures"
	"github.com/pdtopo/pdtopo/internal/receivertest"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// longPoll starts GET /v1/rooms/{room}?wait=30s on rank's socket; it
// returns once the connection is established (the agent will answer it
// even if it starts stopping now) with a channel for the outcome: the
// answer, or the error the engine's client saw.
func longPoll(t *testing.T, a *agent, rank, room int) <-chan error {
	path := filepath.Join(a.socketDir, fmt.Sprintf("rank-%d.sock", rank))
	dialed := make(chan struct{})
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
		close(dialed)
		return conn, err
	}}}
	out := make(chan error, 1)
	go func() {
		resp, err := c.Get(fmt.Sprintf("http://agent/v1/rooms/%d?wait=30s", room))
		if err != nil {
			out <- err
			return
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		out <- fmt.Errorf("answered %d: %s", resp.StatusCode, b.String())
	}()
	select {
	case <-dialed:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll never connected")
	}
	return out
}

// The agent crashes (SIGKILL) while a room is in flight and the engine is
// in a long poll: the poll fails at once with a connection error, not a
// hang; the restarted agent answers the room with 404 RoomNotFound saying
// rooms do not survive a restart, and refuses new rooms until the engine
// registers again (409 EngineNotRegistered). After that, rooms work.
func TestAgentCrashMidRoom(t *testing.T) {
	l := receiverfixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(7, prefillpeer.Silence()) // the prefill never answers room 7
	peer.Script(8, prefillpeer.Success(3))
	plans := writePlanFile(t, l)
	sockets := t.TempDir()
	a, cmd := startAgentProcess(t, sockets, 0, 2, "--plan-file", plans)
	for r := range 2 {
		call(t, a.rank(r), "PUT", "/v1/engine", engineBody(t, l, r), 200)
		call(t, a.rank(r), "POST", "/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":7}`, peer.BootstrapAddr()), 201)
		call(t, a.rank(r), "POST", "/v1/rooms/7/request", `{"kvIndices":[1],"auxIndex":0}`, 202)
	}
	poll := longPoll(t, a, 0, 7)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-poll:
		if strings.HasPrefix(err.Error(), "answered") {
			t.Fatalf("the long poll of a killed agent %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine's long poll hung after the agent died")
	}
	a.stop()

	b, _ := startAgentProcess(t, sockets, 0, 2, "--plan-file", plans) // the kubelet restarts the sidecar
	for r := range 2 {
		got := call(t, b.rank(r), "GET", "/v1/rooms/7", "", 404)
		e := got["error"].(map[string]any)
		if e["code"] != "RoomNotFound" || !strings.Contains(e["message"].(string), "before the agent restarted") {
			t.Fatalf("engine rank %d's room 7 after the restart: %v", r, got)
		}
		got = call(t, b.rank(r), "POST", "/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":8}`, peer.BootstrapAddr()), 409)
		if got["error"].(map[string]any)["code"] != "EngineNotRegistered" {
			t.Fatalf("engine rank %d opening a room before registering again: %v", r, got)
		}
		call(t, b.rank(r), "PUT", "/v1/engine", engineBody(t, l, r), 200)
		if got := roomThroughAPI(t, b.rank(r), peer.BootstrapAddr(), 8); got["status"] != "Success" {
			t.Fatalf("engine rank %d's room 8 after registering again: %v", r, got)
		}
	}
}

// A graceful stop (SIGTERM, as the kubelet sends) fails unfinished rooms
// (failureCode Shutdown) before the sockets close: the engine in a long poll
// gets the answer, not a broken connection.
func TestAgentStopFailsOpenRooms(t *testing.T) {
	l := receiverfixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(7, prefillpeer.Silence())
	a, _ := startAgentProcess(t, t.TempDir(), 0, 1, "--plan-file", writePlanFile(t, l))
	call(t, a.rank(0), "PUT", "/v1/engine", engineBody(t, l, 0), 200)
	call(t, a.rank(0), "POST", "/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":7}`, peer.BootstrapAddr()), 201)
	call(t, a.rank(0), "POST", "/v1/rooms/7/request", `{"kvIndices":[1],"auxIndex":0}`, 202)
	poll := longPoll(t, a, 0, 7)
	a.waitMetric(t, `pdtopo_receiver_room_waiters{engine_rank="0"}`, "1") // the engine waits in the agent
	a.stop()
	select {
	case err := <-poll:
		if !strings.Contains(err.Error(), "answered 200") || !strings.Contains(err.Error(), `"failureCode":"`+shutdownCode+`"`) {
			t.Fatalf("the long poll across a graceful stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine's long poll hung across a graceful stop")
	}
}

// Every plan ConfigMap deleted while the agent runs (the kubelet projects
// an empty volume): the agent keeps its last good plan and says so in
// /v1/agent, a metric and a log line; /readyz stays ready and rooms still
// complete. When the plans come back, the error clears.
func TestPlansDeletedKeepTheLastGoodPlan(t *testing.T) {
	l := receiverfixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 2, "--plan-dir", dir)
	call(t, a.rank(1), "PUT", "/v1/engine", engineBody(t, l, 1), 200)
	if v := a.metric(t, "pdtopo_receiver_plan_source_current"); v != "1" {
		t.Fatalf("pdtopo_receiver_plan_source_current %q before the deletion, want 1", v)
	}

	receivertest.ProjectPlans(t, dir, 2, nil)
	info := a.waitInfo(t, "the deletion", func(i map[string]any) bool { return i["planError"] != "" })
	if info["planHash"] != hash || info["ready"] != true || !strings.Contains(fmt.Sprint(info["planError"]), "no index.json") {
		t.Fatalf("/v1/agent after the deletion: %v, want plan %s kept, ready, and the error", info, hash)
	}
	call(t, http.DefaultClient, "GET", a.probe+"/readyz", "", 200)
	if v := a.metric(t, "pdtopo_receiver_plan_source_current"); v != "0" {
		t.Fatalf("pdtopo_receiver_plan_source_current %q after the deletion, want 0", v)
	}
	if v := a.metric(t, `pdtopo_receiver_plan_load_failures_total{stage="read"}`); v == "0" || v == "" {
		t.Fatalf("read failures %q after the deletion", v)
	}
	if rec := a.log.find(t, "plans do not load; keeping the last good plan"); rec["hash"] != hash {
		t.Fatalf("log line %v does not name the kept plan %s", rec, hash)
	}
	if got := roomThroughAPI(t, a.rank(1), peer.BootstrapAddr(), 5); got["status"] != "Success" {
		t.Fatalf("a room on the kept plan: %v", got)
	}

	receivertest.ProjectPlans(t, dir, 3, objects)
	a.waitInfo(t, "the plans back", func(i map[string]any) bool { return i["planError"] == "" && i["planHash"] == hash })
	if v := a.metric(t, "pdtopo_receiver_plan_source_current"); v != "1" {
		t.Fatalf("pdtopo_receiver_plan_source_current %q with the plans back, want 1", v)
	}
}

// The PDPair changes and its publication goes from one shard ConfigMap to
// three (the kubelet projects a new timestamped directory and swaps
// "..data"): new rooms use the new plan on every rank, a room opened
// before keeps its plan to the end, and going back to one shard works too.
func TestPlanDirShardCountChanges(t *testing.T) {
	oldLayout := receiverfixtures.FragmentedP8D4()                                      // P8 → D4
	newLayout := receiverfixtures.MHA(4, 4, receiverfixtures.Buffers(2, 256, 256, 128)) // P4 → D4, same decode buffers
	oldPeer, newPeer := startPeer(t, oldLayout), startPeer(t, newLayout)
	oldPeer.Script(1, prefillpeer.Success(11))
	dir := t.TempDir()
	oldObjects, oldHash := receivertest.Publish(t, "pair", oldLayout)
	newObjects, newHash := receivertest.Publish(t, "pair", newLayout)
	receivertest.ProjectPlans(t, dir, 1, oldObjects)
	a := startAgent(t, 2, 2, "--plan-dir", dir)
	for _, r := range []int{2, 3} {
		call(t, a.rank(r), "PUT", "/v1/engine", engineBody(t, oldLayout, r), 200)
		call(t, a.rank(r), "POST", "/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":1}`, oldPeer.BootstrapAddr()), 201)
		receivertestWaitBootstrapped(t, a, r, 1)
	}

	receivertest.ProjectPlans(t, dir, 2, receivertest.Reshard(t, newObjects, 3))
	a.waitInfo(t, "the new plan", func(i map[string]any) bool { return i["planHash"] == newHash && i["planError"] == "" })
	for _, r := range []int{2, 3} {
		// room 1 was opened on the old plan and finishes on it
		call(t, a.rank(r), "POST", "/v1/rooms/1/request", `{"kvIndices":[1],"auxIndex":0}`, 202)
		if got := call(t, a.rank(r), "GET", "/v1/rooms/1?wait=10s", "", 200); got["status"] != "Success" || got["bootstrapToken"] != float64(11) {
			t.Fatalf("engine rank %d's room opened before the change: %v", r, got)
		}
		// new rooms use the new plan: the new prefill completes them, the old is refused
		if got := roomThroughAPI(t, a.rank(r), newPeer.BootstrapAddr(), 2); got["status"] != "Success" {
			t.Fatalf("engine rank %d's room on the new plan: %v", r, got)
		}
		call(t, a.rank(r), "POST", "/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":3}`, oldPeer.BootstrapAddr()), 201)
		got := call(t, a.rank(r), "GET", "/v1/rooms/3?wait=10s", "", 200)
		if got["failureCode"] != "LayoutMismatch" || !strings.Contains(fmt.Sprint(got["failureMessage"]), "prefill_tp_size is 8, the plan was made for prefill tensorParallelSize 4") {
			t.Fatalf("engine rank %d's room against the old prefill on the new plan: %v", r, got)
		}
	}

	receivertest.ProjectPlans(t, dir, 3, oldObjects) // back to one shard
	a.waitInfo(t, "the old plan again", func(i map[string]any) bool { return i["planHash"] == oldHash })
	for _, r := range []int{2, 3} {
		if got := roomThroughAPI(t, a.rank(r), oldPeer.BootstrapAddr(), 4); got["status"] != "Success" {
			t.Fatalf("engine rank %d's room back on the old plan: %v", r, got)
		}
	}
}

func receivertestWaitBootstrapped(t *testing.T, a *agent, rank, room int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := call(t, a.rank(rank), "GET", fmt.Sprintf("/v1/rooms/%d", room), "", 200)
		if got["status"] == "Bootstrapped" {
			return
		}
		if got["status"] != "Bootstrapping" || time.Now().After(deadline) {
			t.Fatalf("engine rank %d's room %d: %v, want Bootstrapped", rank, room, got)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// shutdownCode is the failureCode of rooms an agent stops under.
const shutdownCode = string(receiver.ReasonShutdown)
