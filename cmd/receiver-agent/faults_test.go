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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// longPoll starts an engine's long poll of rank's room (Wait, 30s) and
// returns once the agent holds it (its waiters gauge says so), with a
// channel for the outcome: the answer, or the error the client saw.
func longPoll(t *testing.T, a *agent, rank int, room int64) <-chan pollOutcome {
	out := make(chan pollOutcome, 1)
	go func() {
		got, err := a.rank(rank).Wait(context.Background(), room, 30*time.Second)
		out <- pollOutcome{got, err}
	}()
	a.waitMetric(t, fmt.Sprintf(`pdtopo_receiver_room_waiters{engine_rank="%d"}`, rank), "1")
	return out
}

type pollOutcome struct {
	room agentclient.Room
	err  error
}

// The agent crashes (SIGKILL) while a room is in flight and the engine is
// in a long poll: the poll fails at once with a connection error, not a
// hang; the restarted agent answers the room with 404 RoomNotFound saying
// rooms do not survive a restart, and refuses new rooms until the engine
// registers again (409 EngineNotRegistered). After that, rooms work.
func TestAgentCrashMidRoom(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(7, prefillpeer.Silence()) // the prefill never answers room 7
	peer.Script(8, prefillpeer.Success(3))
	plans := writePlanFile(t, l)
	sockets := t.TempDir()
	a, cmd := startAgentProcess(t, sockets, 0, 2, "--plan-file", plans)
	for r := range 2 {
		register(t, a.rank(r), l, r)
		openRoom(t, a.rank(r), peer.BootstrapAddr(), 7)
		request(t, a.rank(r), 7)
	}
	poll := longPoll(t, a, 0, 7)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-poll:
		var ue *agentclient.UnavailableError
		if !errors.As(got.err, &ue) || ue.Timeout() {
			t.Fatalf("the long poll of a killed agent: %+v, %v; want the connection's error", got.room, got.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine's long poll hung after the agent died")
	}
	a.stop()

	b, _ := startAgentProcess(t, sockets, 0, 2, "--plan-file", plans) // the kubelet restarts the sidecar
	for r := range 2 {
		_, err := b.rank(r).Room(t.Context(), 7)
		if e := refused(t, err, 404, string(receiver.CodeRoomNotFound)); !strings.Contains(e.Message, "before the agent restarted") {
			t.Fatalf("engine rank %d's room 7 after the restart: %v", r, e)
		}
		_, err = b.rank(r).Open(t.Context(), peer.BootstrapAddr(), 8)
		_ = refused(t, err, 409, string(receiver.CodeEngineNotRegistered))
		register(t, b.rank(r), l, r)
		if got := roomThroughAPI(t, b.rank(r), peer.BootstrapAddr(), 8); got.Status != receiver.Success {
			t.Fatalf("engine rank %d's room 8 after registering again: %+v", r, got)
		}
	}
}

// A graceful stop (SIGTERM, as the kubelet sends) fails unfinished rooms
// (failureCode Shutdown) before the sockets close: the engine in a long poll
// gets the answer, not a broken connection.
func TestAgentStopFailsOpenRooms(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(7, prefillpeer.Silence())
	a, _ := startAgentProcess(t, t.TempDir(), 0, 1, "--plan-file", writePlanFile(t, l))
	register(t, a.rank(0), l, 0)
	openRoom(t, a.rank(0), peer.BootstrapAddr(), 7)
	request(t, a.rank(0), 7)
	poll := longPoll(t, a, 0, 7) // the engine waits in the agent
	a.stop()
	select {
	case got := <-poll:
		if got.err != nil || got.room.Status != receiver.Failed || got.room.FailureCode != shutdownCode {
			t.Fatalf("the long poll across a graceful stop: %+v, %v", got.room, got.err)
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
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 2, "--plan-dir", dir)
	register(t, a.rank(1), l, 1)
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
	if got := roomThroughAPI(t, a.rank(1), peer.BootstrapAddr(), 5); got.Status != receiver.Success {
		t.Fatalf("a room on the kept plan: %+v", got)
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
	oldLayout := fixtures.FragmentedP8D4()                              // P8 → D4
	newLayout := fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128)) // P4 → D4, same decode buffers
	oldPeer, newPeer := startPeer(t, oldLayout), startPeer(t, newLayout)
	oldPeer.Script(1, prefillpeer.Success(11))
	dir := t.TempDir()
	oldObjects, oldHash := receivertest.Publish(t, "pair", oldLayout)
	newObjects, newHash := receivertest.Publish(t, "pair", newLayout)
	receivertest.ProjectPlans(t, dir, 1, oldObjects)
	a := startAgent(t, 2, 2, "--plan-dir", dir)
	for _, r := range []int{2, 3} {
		register(t, a.rank(r), oldLayout, r)
		openRoom(t, a.rank(r), oldPeer.BootstrapAddr(), 1)
		waitBootstrapped(t, a, r, 1)
	}

	receivertest.ProjectPlans(t, dir, 2, receivertest.Reshard(t, newObjects, 3))
	a.waitInfo(t, "the new plan", func(i map[string]any) bool { return i["planHash"] == newHash && i["planError"] == "" })
	for _, r := range []int{2, 3} {
		// room 1 was opened on the old plan and finishes on it
		request(t, a.rank(r), 1)
		if got := waitRoom(t, a.rank(r), 1); got.Status != receiver.Success || got.BootstrapToken != 11 {
			t.Fatalf("engine rank %d's room opened before the change: %+v", r, got)
		}
		// new rooms use the new plan: the new prefill completes them, the old is refused
		if got := roomThroughAPI(t, a.rank(r), newPeer.BootstrapAddr(), 2); got.Status != receiver.Success {
			t.Fatalf("engine rank %d's room on the new plan: %+v", r, got)
		}
		openRoom(t, a.rank(r), oldPeer.BootstrapAddr(), 3)
		got := waitRoom(t, a.rank(r), 3)
		if got.FailureCode != string(receiver.ReasonLayoutMismatch) || !strings.Contains(got.FailureMessage, "prefill_tp_size is 8, the plan was made for prefill tensorParallelSize 4") {
			t.Fatalf("engine rank %d's room against the old prefill on the new plan: %+v", r, got)
		}
	}

	receivertest.ProjectPlans(t, dir, 3, oldObjects) // back to one shard
	a.waitInfo(t, "the old plan again", func(i map[string]any) bool { return i["planHash"] == oldHash })
	for _, r := range []int{2, 3} {
		if got := roomThroughAPI(t, a.rank(r), oldPeer.BootstrapAddr(), 4); got.Status != receiver.Success {
			t.Fatalf("engine rank %d's room back on the old plan: %+v", r, got)
		}
	}
}

func waitBootstrapped(t *testing.T, a *agent, rank int, room int64) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("engine rank %d's room %d Bootstrapped", rank, room), func() error {
		got, err := a.rank(rank).Room(t.Context(), room)
		if err == nil && got.Status == receiver.Bootstrapped {
			return nil
		}
		notYet := fmt.Errorf("%+v %v, want Bootstrapped", got, err)
		if err != nil || got.Status != receiver.Bootstrapping {
			return poll.Stop(notYet) // a room leaves Bootstrapping only once
		}
		return notYet
	})
}

// shutdownCode is the failureCode of rooms an agent stops under.
const shutdownCode = string(receiver.ReasonShutdown)

// A new plan that one rank's registered engine does not fit (another
// buffer count) is refused on every rank: the pod's ranks never run two
// plan sets. The refusal shows in /v1/agent and the metrics, and both
// ranks keep completing rooms on the old plan.
func TestPlanRefusedByOneRankIsRefusedByAll(t *testing.T) {
	l := fixtures.FragmentedP8D4()                                  // 4 decode KV buffers
	wider := fixtures.MHA(8, 4, fixtures.Buffers(3, 128, 256, 128)) // 6
	peer := startPeer(t, l)
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 2, "--plan-dir", dir)
	register(t, a.rank(0), l, 0) // rank 1's engine has not registered yet

	widerObjects, _ := receivertest.Publish(t, "pair", wider)
	receivertest.ProjectPlans(t, dir, 2, widerObjects)
	info := a.waitInfo(t, "the refusal", func(i map[string]any) bool { return i["planError"] != "" })
	if info["planHash"] != hash || !strings.Contains(fmt.Sprint(info["planError"]), "engine rank 0: InvalidArgument: the engine registers 4 KV and 0 state buffers but the plan") {
		t.Fatalf("/v1/agent after a plan rank 0's engine does not fit: %v", info)
	}
	if v := a.metric(t, `pdtopo_receiver_plan_load_failures_total{stage="refused"}`); v != "1" {
		t.Fatalf("refusals counted %q, want 1", v)
	}
	register(t, a.rank(1), l, 1) // rank 1 still runs the old plan's buffers
	for r := range 2 {
		if got := roomThroughAPI(t, a.rank(r), peer.BootstrapAddr(), 9); got.Status != receiver.Success {
			t.Fatalf("engine rank %d's room on the kept plan: %v", r, got)
		}
	}
}
