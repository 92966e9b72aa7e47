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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// agentMainEnv makes the test binary run the agent's main instead of the
// tests, so that fault tests can kill a real agent process and start
// another on the same sockets.
const agentMainEnv = "PDTOPO_TEST_RUN_RECEIVER_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	if spec := os.Getenv(holdIdleEnv); spec != "" {
		holdIdleMain(spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// logLines collects the agent's JSON log lines.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
	buf   bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadBytes('\n')
		if err != nil {
			l.buf.Write(line) // an unfinished line: keep it for the next write
			return len(p), nil
		}
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil {
			l.lines = append(l.lines, rec)
		}
	}
}

// find returns the first log record with msg, waiting for it.
func (l *logLines) find(t testing.TB, msg string) map[string]any {
	t.Helper()
	return l.findWhere(t, msg, func(map[string]any) bool { return true })
}

// findWhere returns the first log record with msg that ok accepts, waiting
// for it.
func (l *logLines) findWhere(t testing.TB, msg string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return testutil.EventuallyValue(t, 10*time.Second, fmt.Sprintf("the agent logging %q", msg), func() (map[string]any, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, rec := range l.lines {
			if rec["msg"] == msg && ok(rec) {
				return rec, nil
			}
		}
		return nil, fmt.Errorf("not among %d records", len(l.lines))
	})
}

// agent is a running agent: its engine sockets (by rank), its probe URL
// (if --probe-addr was given) and its log.
type agent struct {
	socketDir string
	probe     string
	log       *logLines
	// stop ends the agent (in-process: cancel; process: SIGTERM) and
	// waits for it.
	stop func()

	mu      sync.Mutex
	clients map[int]*agentclient.Client
}

// rank is the engine API of one rank, through the client engines use.
func (a *agent) rank(r int) *agentclient.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clients == nil {
		a.clients = map[int]*agentclient.Client{}
	}
	if a.clients[r] == nil {
		a.clients[r] = agentclient.New(agentclient.SocketPath(a.socketDir, r), agentclient.Options{Timeout: 30 * time.Second})
	}
	return a.clients[r]
}

// startAgent runs the agent's main loop in this process until the test
// ends, serving ranks on sockets in a fresh --socket-dir and probes on a
// free loopback port; it waits until every rank answers.
func startAgent(t testing.TB, firstRank, rankCount int, args ...string) *agent {
	t.Helper()
	a := &agent{socketDir: t.TempDir(), log: &logLines{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	all := append([]string{fmt.Sprintf("--first-rank=%d", firstRank), fmt.Sprintf("--rank-count=%d", rankCount),
		"--socket-dir", a.socketDir, "--probe-addr", "127.0.0.1:0", "--log-level", "info"}, args...)
	go func() { done <- run(ctx, all, io.Discard, a.log) }()
	var once sync.Once
	a.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
		})
	}
	t.Cleanup(a.stop)
	a.probe = "http://" + a.log.find(t, "probe address listening")["addr"].(string)
	for r := firstRank; r < firstRank+rankCount; r++ {
		waitAnswers(t, a.rank(r))
	}
	return a
}

// startAgentProcess runs the agent as a child process (this test binary
// re-executed as the agent) with a given --socket-dir; kill it with
// SIGKILL to simulate a crash.
func startAgentProcess(t testing.TB, socketDir string, firstRank, rankCount int, args ...string) (*agent, *exec.Cmd) { //nolint:unparam // the ranks as startAgent takes them; no process test serves ranks past 0 yet
	t.Helper()
	a := &agent{socketDir: socketDir, log: &logLines{}}
	all := append([]string{fmt.Sprintf("--first-rank=%d", firstRank), fmt.Sprintf("--rank-count=%d", rankCount),
		"--socket-dir", socketDir, "--probe-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command(os.Args[0], all...)
	cmd.Env = append(os.Environ(), agentMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			_, _ = a.log.Write(append(sc.Bytes(), '\n')) // never fails: it keeps the lines
		}
	}()
	var once sync.Once
	a.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-copied
			_ = cmd.Wait()
		})
	}
	t.Cleanup(a.stop)
	a.probe = "http://" + a.log.find(t, "probe address listening")["addr"].(string)
	for r := firstRank; r < firstRank+rankCount; r++ {
		waitAnswers(t, a.rank(r))
	}
	return a, cmd
}

func waitAnswers(t testing.TB, c *agentclient.Client) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "the agent answering", func() error { return c.Healthz(t.Context()) })
}

// call sends a request to the probe address and decodes the JSON answer,
// failing unless the status is want. (The engine API is called through
// agentclient, as engines call it.)
func call(t testing.TB, c *http.Client, method, url, body string, want int) map[string]any {
	t.Helper()
	out, _ := callRaw(t, c, method, url, body, want)
	return out
}

func callRaw(t testing.TB, c *http.Client, method, url, body string, want int) (map[string]any, string) {
	t.Helper()
	if !strings.HasPrefix(url, "http") {
		url = "http://agent" + url
	}
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, raw, want)
	}
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out) // an answer that is no JSON object (a probe's text) leaves out empty
	return out, string(raw)
}

// register registers rank's engine, with buffers matching the layout.
func register(t testing.TB, c *agentclient.Client, l planv1.Layout, rank int) {
	t.Helper()
	if err := c.RegisterEngine(t.Context(), receivertest.Engine(receivertest.Snapshot(t, l, rank), rank)); err != nil {
		t.Fatalf("registering engine rank %d: %v", rank, err)
	}
}

// openRoom opens a room against bootstrap.
func openRoom(t testing.TB, c *agentclient.Client, bootstrap string, room int64) agentclient.Room {
	t.Helper()
	got, err := c.Open(t.Context(), bootstrap, room)
	if err != nil {
		t.Fatalf("opening room %d: %v", room, err)
	}
	return got
}

// request sends a room's request (queued while the room bootstraps).
func request(t testing.TB, c *agentclient.Client, room int64) {
	t.Helper()
	if _, err := c.Request(t.Context(), room, agentclient.Request{KVIndices: []int64{1, 2}}); err != nil {
		t.Fatalf("room %d's request: %v", room, err)
	}
}

// waitRoom long-polls a room until it finished (10s at most).
func waitRoom(t testing.TB, c *agentclient.Client, room int64) agentclient.Room {
	t.Helper()
	got, err := c.Wait(t.Context(), room, 10*time.Second)
	if err != nil {
		t.Fatalf("waiting for room %d: %v", room, err)
	}
	return got
}

// refused checks that err is the agent's refusal with status and code.
func refused(t testing.TB, err error, status int, code string) *agentclient.APIError {
	t.Helper()
	var ae *agentclient.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != status || ae.Code != code {
		t.Fatalf("got %v, want the agent's %d %s", err, status, code)
	}
	return ae
}

// roomThroughAPI runs one room the way an engine does: open, request at
// once (the agent queues it while the room bootstraps), long poll, clear.
func roomThroughAPI(t testing.TB, c *agentclient.Client, bootstrap string, room int64) agentclient.Room {
	t.Helper()
	openRoom(t, c, bootstrap, room)
	request(t, c, room)
	got := waitRoom(t, c, room)
	if err := c.Clear(t.Context(), room); err != nil {
		t.Fatalf("clearing room %d: %v", room, err)
	}
	return got
}

// agentInfo reads GET /v1/agent from the probe address.
func (a *agent) info(t testing.TB) map[string]any {
	t.Helper()
	return call(t, http.DefaultClient, "GET", a.probe+"/v1/agent", "", 200)
}

// waitInfo polls /v1/agent until ok accepts it.
func (a *agent) waitInfo(t testing.TB, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return testutil.EventuallyValue(t, 10*time.Second, "/v1/agent showing "+what, func() (map[string]any, error) {
		info := a.info(t)
		if !ok(info) {
			return nil, fmt.Errorf("%v", info)
		}
		return info, nil
	})
}

// metric returns the value of the sample whose line starts with series.
func (a *agent) metric(t testing.TB, series string) string {
	t.Helper()
	_, text := callRaw(t, http.DefaultClient, "GET", a.probe+"/metrics", "", 200)
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	return ""
}

func startPeer(t testing.TB, l planv1.Layout) *prefillpeer.Peer {
	return receivertest.StartPeer(t, l, nil)
}

// waitMetric polls the probe address until series has value want.
func (a *agent) waitMetric(t testing.TB, series, want string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, series+" at "+want, func() error {
		if got := a.metric(t, series); got != want {
			return fmt.Errorf("%s is %q, want %s", series, got, want)
		}
		return nil
	})
}
