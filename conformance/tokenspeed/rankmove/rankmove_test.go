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

// Package rankmove checks, against tokenspeed's own bootstrap server, that
// pdtopo's agent finds a prefill rank again when it comes back on a new
// port: the server is the engine's (bootstrap.py), the prefill ranks are
// cmd/prefill-peer registering with it (--register-with), the agent is the
// built cmd/receiver-agent. Local only: run.sh builds the engine's modules
// and sets TOKENSPEED_V1_ENV; without it the test skips.
package rankmove

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// envDir names the tokenspeed-env directory (../chaos/env.sh) of the v1
// reference commit.
const envDir = "TOKENSPEED_V1_ENV"

// heartbeat is the agent's heartbeat interval: the move must be found
// within it.
const heartbeat = 2 * time.Second

func TestRankMoveAgainstTheReferenceBootstrapServer(t *testing.T) {
	env := os.Getenv(envDir)
	if env == "" {
		t.Skipf("%s is unset: run conformance/tokenspeed/rankmove/run.sh TOKENSPEED_GIT_DIR", envDir)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(root, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	dir := t.TempDir()
	bin := testutil.BuildCommands(t, root, "./cmd/receiver-agent", "./cmd/pdtopo", "./cmd/prefill-peer")
	server := startBootstrap(t, dir, env, filepath.Join(root, "conformance", "tokenspeed", "rankmove", "bootstrap.py"))

	peerArgs := []string{filepath.Join(bin, "prefill-peer"), "-f", sample, "--register-with", "http://" + server, "--quiet"}
	peer := start(t, dir, "prefill-1", nil, peerArgs...)
	old := peer.endpoints(t, 8)
	waitServerAnswers(t, server, old)

	sockets := filepath.Join(dir, "sockets")
	if err := os.Mkdir(sockets, 0o700); err != nil {
		t.Fatal(err)
	}
	start(t, dir, "agent", nil, filepath.Join(bin, "receiver-agent"), "--first-rank=0", "--rank-count=1",
		"--socket-dir="+sockets, "--status-host=127.0.0.1", "--plan-file="+testutil.PlanFile(t, bin, sample, dir), "--log-level=warn",
		"--heartbeat-interval="+heartbeat.String(), "--waiting-timeout=1m")
	c := agentclient.New(filepath.Join(sockets, "rank-0.sock"), agentclient.Options{})
	defer c.Close()
	testutil.Eventually(t, 10*time.Second, "the agent answering", func() error { return c.Healthz(t.Context()) })
	if err := c.RegisterEngine(t.Context(), receivertest.Engine(receivertest.Snapshot(t, layout(t, sample), 0), 0)); err != nil {
		t.Fatal(err)
	}

	for room := int64(1); room <= 3; room++ {
		if got := roomThrough(t, c, server, room); got.Status != receiver.Success {
			t.Fatalf("room %d before the move: %+v", room, got)
		}
	}
	// bootstrapped onto the endpoints the move makes stale
	if _, err := c.Open(t.Context(), server, 100); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "room 100 bootstrapped", func() error {
		r, err := c.Room(t.Context(), 100)
		if err == nil && r.Status != receiver.Bootstrapped {
			err = fmt.Errorf("room 100 is %v", r.Status)
		}
		return err
	})

	peer.kill()
	moving := time.Now()
	peer = start(t, dir, "prefill-2", nil, peerArgs...)
	moved := peer.endpoints(t, 8)
	for r := range moved {
		if moved[r] == old[r] {
			t.Fatalf("prefill rank %d came back at its old endpoint %s: nothing moved", r, old[r])
		}
	}
	waitServerAnswers(t, server, moved)
	registered := time.Now()
	t.Logf("the ranks re-registered with tokenspeed's bootstrap server %v after the kill", registered.Sub(moving).Round(time.Millisecond))

	// room 100 was bootstrapped onto the old endpoints; room 101 opens
	// now, before the agent's next heartbeat: both must end within one
	// heartbeat interval
	for _, room := range []int64{100, 101} {
		if room == 101 {
			if _, err := c.Open(t.Context(), server, room); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Request(t.Context(), room, agentclient.Request{KVIndices: []int64{1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.Wait(t.Context(), 100, heartbeat+5*time.Second)
	noticed := time.Since(registered)
	if err != nil || got.Status != receiver.Failed || got.FailureCode != string(receiver.ReasonLostConnection) ||
		!strings.Contains(got.FailureMessage, "moved from") {
		t.Errorf("room 100, bootstrapped before the move: %+v %v; want Failed %s naming the move", got, err, receiver.ReasonLostConnection)
	}
	t.Logf("room 100 (bootstrapped before the move) ended %v after the re-registration: %s %s", noticed.Round(time.Millisecond), got.Status, got.FailureMessage)
	if noticed > heartbeat+500*time.Millisecond {
		t.Errorf("the move was noticed %v after the re-registration, more than a heartbeat interval (%v)", noticed, heartbeat)
	}
	got, err = c.Wait(t.Context(), 101, heartbeat+5*time.Second)
	t.Logf("room 101 (opened right after the re-registration) ended %v after it: %s %s", time.Since(registered).Round(time.Millisecond), got.Status, got.FailureCode)
	if err != nil || (got.Status != receiver.Success && got.Status != receiver.Failed) || time.Since(registered) > heartbeat+time.Second {
		t.Errorf("room 101, opened right after the re-registration: %+v %v; want it ended within a heartbeat interval", got, err)
	}
	for _, room := range []int64{100, 101} {
		_ = c.Clear(t.Context(), room)
	}

	// from then on every room succeeds: a room every 100 ms for two more
	// heartbeat intervals, 20 at least
	n := 0
	for room := int64(200); n < 20 || time.Since(registered) < noticed+2*heartbeat; room++ {
		if got := roomThrough(t, c, server, room); got.Status != receiver.Success {
			t.Errorf("room %d, opened %v after the re-registration: %+v", room, time.Since(registered).Round(time.Millisecond), got)
		}
		n++
		time.Sleep(100 * time.Millisecond) // the rooms' pace
	}
	t.Logf("%d rooms opened after the move was found, each checked for Success", n)
}

// startBootstrap runs tokenspeed's bootstrap server on a free port and
// returns its host:port. A free port may be taken before the server binds
// it (other tests share the machine): bootstrap.py then exits, and another
// port is tried.
func startBootstrap(t *testing.T, dir, env, script string) string {
	t.Helper()
	for try := range 5 {
		port := freePort(t)
		p := start(t, dir, fmt.Sprintf("bootstrap-%d", try), []string{"PYTHONPATH=" + env}, python(), script, fmt.Sprint(port))
		if _, err := p.nextLine(20 * time.Second); err == nil {
			return fmt.Sprintf("127.0.0.1:%d", port)
		}
		p.kill()
	}
	t.Fatalf("tokenspeed's bootstrap server did not start on any of 5 ports: see %s/bootstrap-*.log", dir)
	return ""
}

// roomThrough runs one room as an engine does: open, request, long poll,
// clear.
func roomThrough(t *testing.T, c *agentclient.Client, bootstrap string, room int64) agentclient.Room {
	t.Helper()
	if _, err := c.Open(t.Context(), bootstrap, room); err != nil {
		t.Fatalf("room %d: %v", room, err)
	}
	if _, err := c.Request(t.Context(), room, agentclient.Request{KVIndices: []int64{1, 2}}); err != nil {
		t.Fatalf("room %d: %v", room, err)
	}
	got, err := c.Wait(t.Context(), room, 10*time.Second)
	if err != nil {
		t.Fatalf("room %d: %v", room, err)
	}
	_ = c.Clear(t.Context(), room)
	return got
}

// waitServerAnswers waits until the reference's server answers every
// prefill rank at endpoints[rank] (tcp://HOST:PORT).
func waitServerAnswers(t *testing.T, server string, endpoints []string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "tokenspeed's bootstrap server answering the ranks' endpoints", func() error {
		for r, ep := range endpoints {
			resp, err := http.Get("http://" + server + "/route?" + kvwire.RankAddressQuery(r, 0))
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			host, port, _ := net.SplitHostPort(strings.TrimPrefix(ep, "tcp://"))
			if want := fmt.Sprintf(`{"rank_ip": %q, "rank_port": %s}`, host, port); string(body) != want {
				return fmt.Errorf("rank %d: %.200q, want %s", r, body, want)
			}
		}
		return nil
	})
}

func layout(t *testing.T, sample string) planv1.Layout {
	t.Helper()
	pair, err := manifest.ReadPDPairFile(sample, "")
	if err != nil {
		t.Fatal(err)
	}
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func python() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a process of the check; its stdout lines arrive on lines, its
// stderr in DIR/NAME.log; it is killed when the test ends. The bootstrap
// server reads stdin until it closes: stdin is a pipe kept open.
type proc struct {
	name string
	cmd  *exec.Cmd
	// stdin is held open (a collected pipe would close and end the server)
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}
}

func start(t *testing.T, dir, name string, env []string, args ...string) *proc {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody reads this process's lines any more
			}
		}
		_ = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	_ = p.stdin.Close()
}

// nextLine is the process's next stdout line; an error if it exits first
// or prints nothing for d.
func (p *proc) nextLine(d time.Duration) (string, error) {
	select {
	case l := <-p.lines:
		return l, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited", p.name)
	case <-time.After(d):
		return "", fmt.Errorf("%s printed nothing for %v", p.name, d)
	}
}

// waitLine waits for a line starting with prefix.
func (p *proc) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	return testutil.EventuallyValue(t, 20*time.Second, p.name+" printing "+prefix, func() (string, error) {
		select {
		case l := <-p.lines:
			if strings.HasPrefix(l, prefix) {
				return l, nil
			}
			return "", fmt.Errorf("%s printed %q", p.name, l)
		case <-p.done:
			return "", poll.Stop(fmt.Errorf("%s exited; see its log", p.name))
		default:
			return "", fmt.Errorf("%s printed nothing yet", p.name)
		}
	})
}

// endpoints reads the n "engine rank R (...): tcp://HOST:PORT" lines
// prefill-peer prints once its ranks registered.
func (p *proc) endpoints(t *testing.T, n int) []string {
	t.Helper()
	p.waitLine(t, "bootstrap ")
	out := make([]string, n)
	for r := range n {
		line := p.waitLine(t, fmt.Sprintf("  engine rank %d ", r))
		_, ep, ok := strings.Cut(line, "): ")
		if !ok {
			t.Fatalf("%s: %q", p.name, line)
		}
		out[r] = ep
	}
	return out
}
