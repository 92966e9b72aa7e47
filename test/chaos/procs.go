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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// proc is one process of the system under test, restartable with the same
// command line.
type proc struct {
	name string
	args []string
	env  []string
	log  *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
	// onLine gets every stdout line (may be nil).
	onLine func(string)
	exited chan struct{}
}

func newProc(t *testing.T, dir, name string, env []string, onLine func(string), args ...string) *proc {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	return &proc{name: name, args: args, env: env, log: log, onLine: onLine}
}

// start runs the command; its stdout lines go to onLine.
func (p *proc) start(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stderr = p.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if p.onLine != nil {
				p.onLine(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
}

// signal sends sig to the running process.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill SIGKILLs the process and waits until it is gone.
func (p *proc) kill() {
	p.signal(syscall.SIGCONT) // a stopped process dies as well, but say so
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
}

// wait waits for the process to exit, at most d; false if it did not.
func (p *proc) wait(d time.Duration) bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return true
	}
	select {
	case <-exited:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// rssKiB is the process's resident set (VmRSS) from /proc, 0 if gone.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// repoRoot is the module's root, two directories up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// roomLine is what driver.py prints when a room ends.
type roomLine struct {
	Room    int64   `json:"room"`
	Rank    int     `json:"rank"`
	Opened  float64 `json:"opened"`
	Ended   float64 `json:"ended"`
	Status  string  `json:"status"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Done    bool    `json:"done"`
}

// prefillReady waits for the prefill process's "bootstrap ADDR" line.
func prefillReady(t *testing.T, lines <-chan string) {
	t.Helper()
	testutil.EventuallyTrue(t, 20*time.Second, "the prefill printing its bootstrap address", func() bool {
		select {
		case l := <-lines:
			return strings.HasPrefix(l, "bootstrap ")
		default:
			return false
		}
	})
}

func decodeRoom(line string) (roomLine, bool) {
	var r roomLine
	if json.Unmarshal([]byte(line), &r) != nil {
		return r, false
	}
	return r, true
}
