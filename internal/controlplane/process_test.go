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

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// fakeManager writes a shell script standing in for bin/manager; it receives
// the real default flags and ignores them.
func fakeManager(t *testing.T, body string) ManagerOptions {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "manager")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ManagerOptions{Path: path, LogDir: dir, Kubeconfig: "kc"}
}

func TestManagerThatExitsIsReportedWithItsLog(t *testing.T) {
	o := fakeManager(t, `echo "unable to load kubeconfig $KUBECONFIG" >&2; exit 3`)
	o.Kubeconfig = "some.kubeconfig"
	m, err := StartManager(o)
	if err != nil {
		t.Fatal(err)
	}
	err = m.WaitReady(context.Background(), "", 10*time.Second)
	if err == nil {
		t.Fatal("WaitReady succeeded for a manager that exited")
	}
	abs, _ := filepath.Abs("some.kubeconfig")
	for _, want := range []string{"exited on its own", "exit status 3", "manager.log", "unable to load kubeconfig " + abs} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

func TestManagerStopEndsItsProcessGroup(t *testing.T) {
	// The manager's own child (sleep) must go too: stop signals the group.
	o := fakeManager(t, `sleep 300 & echo $! > "$(dirname "$0")/child.pid"; wait`)
	m, err := StartManager(o)
	if err != nil {
		t.Fatal(err)
	}
	childPID, err := strconv.Atoi(waitForFile(t, filepath.Join(filepath.Dir(o.Path), "child.pid")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(5 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := syscall.Kill(m.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("manager %d still exists", m.Pid())
	}
	waitExited(t, childPID)
}

func TestManagerIgnoringSIGTERMIsKilled(t *testing.T) {
	o := fakeManager(t, `trap "" TERM; echo started > "$(dirname "$0")/started"; while :; do sleep 0.1; done`)
	m, err := StartManager(o)
	if err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(filepath.Dir(o.Path), "started"))
	began := time.Now()
	err = m.Stop(500 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("stop = %v, want an error saying the manager was killed", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("stop took %s", d)
	}
	if err := syscall.Kill(m.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("manager %d still exists", m.Pid())
	}
}

// waitForFile returns the trimmed content of path once the script wrote it.
func waitForFile(t *testing.T, path string) string {
	t.Helper()
	var content string
	err := poll.Until(10*time.Second, func() error {
		b, err := os.ReadFile(path)
		if err == nil && !strings.HasSuffix(string(b), "\n") {
			err = errors.New("no whole line yet")
		}
		content = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatalf("%s never appeared: %v", path, err)
	}
	return content
}

// waitExited waits for pid to disappear (an orphaned child is reaped by
// init, not by us, so give it a moment).
func waitExited(t *testing.T, pid int) {
	t.Helper()
	if err := poll.Until(5*time.Second, func() error {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill -0: %v", err)
		}
		return nil
	}); err != nil {
		t.Errorf("process %d outlived the manager's stop: %v", pid, err)
	}
}
