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
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/testutil"
)

const repoRoot = "../.."

// TestMain lets the test binary stand in for run-local, so the Ctrl-C test
// runs the real main in a child process without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("PDTOPO_RUN_LOCAL_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCtrlCStopsEverything starts run-local as a terminal would (its own
// process group), waits for the control plane and the manager, then sends
// SIGINT to the whole group as Ctrl-C does. run-local must exit 0 and leave
// none of its children (etcd, kube-apiserver, manager) running.
func TestCtrlCStopsEverything(t *testing.T) {
	bin, _ := filepath.Abs(testutil.BinDir(t)) // fails without the binaries unless PDTOPO_SKIP_ENVTEST=1
	tmp := t.TempDir()
	kubeconfig := filepath.Join(tmp, "local.kubeconfig")
	cmd := exec.Command(os.Args[0],
		"--bin", bin,
		"--crds", filepath.Join(repoRoot, "config", "crd", "bases"),
		"--samples", filepath.Join(repoRoot, "config", "samples"),
		"--webhooks", filepath.Join(repoRoot, "config", "webhook"),
		"--decode-pod", filepath.Join(repoRoot, "config", "samples", "decode", "pod.yaml"),
		"--kubeconfig", kubeconfig,
		"--logs", filepath.Join(tmp, "logs"),
		"--manager", buildManager(t, tmp),
		"--prefill-peer", buildCmd(t, tmp, "prefill-peer"),
		"--agent", buildCmd(t, tmp, "receiver-agent"),
		// A random loopback address: the agent's probe port is the fixed 9440.
		"--pod-ip", fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), 1+rand.IntN(254), 1+rand.IntN(254)))
	cmd.Env = append(os.Environ(), "PDTOPO_RUN_LOCAL_AS_MAIN=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1024)
	var output strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }() // only if the test failed midway

	waitForLine(t, lines, &output, "Ctrl-C stops", 3*time.Minute, &stderr)
	children := childrenOf(cmd.Process.Pid)
	if len(children) < 5 {
		t.Fatalf("want etcd, kube-apiserver, the manager, the decode agent and the prefill peer as children of run-local, found pids %v\nstdout:\n%s\nstderr:\n%s",
			children, output.String(), stderr.String())
	}
	// The live table shows rooms completing through the pod's agent.
	succeeded := waitForMatch(t, lines, &output, regexp.MustCompile(`(\d+) engine ranks, [0-9.]+ rooms/s, (\d+) succeeded, (\d+) failed`), func(m []string) bool {
		return m[1] == "4" && m[2] != "0" && m[3] == "0"
	}, 2*time.Minute, &stderr)
	t.Logf("live table: %s", succeeded)
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("run-local is up but wrote no kubeconfig: %v", err)
	}

	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	go func() {
		for l := range lines {
			output.WriteString(l + "\n")
		}
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("run-local exited with %v after Ctrl-C\nstdout:\n%s\nstderr:\n%s", err, output.String(), stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("run-local still running 90s after Ctrl-C\nstdout:\n%s", output.String())
	}
	t.Logf("stopped %d children in %s", len(children), time.Since(began))
	for _, pid := range children {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d (%s) survived Ctrl-C", pid, commandOf(pid))
		}
	}
	if _, err := os.Stat(kubeconfig); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig %s left behind", kubeconfig)
	}
	if !strings.Contains(output.String(), "stopped: every process started here has exited") {
		t.Errorf("run-local did not report a clean stop:\n%s\nstderr:\n%s", output.String(), stderr.String())
	}
}

func waitForLine(t *testing.T, lines <-chan string, output *strings.Builder, want string, timeout time.Duration, stderr *strings.Builder) {
	t.Helper()
	waitForPrinted(t, lines, output, stderr, timeout, fmt.Sprintf("run-local printing %q", want), func(l string) bool { return strings.Contains(l, want) })
}

// waitForMatch waits for a line matching re whose submatches satisfy ok,
// and returns it.
func waitForMatch(t *testing.T, lines <-chan string, output *strings.Builder, re *regexp.Regexp, ok func([]string) bool, timeout time.Duration, stderr *strings.Builder) string {
	t.Helper()
	return waitForPrinted(t, lines, output, stderr, timeout, fmt.Sprintf("run-local printing a line matching %q with rooms succeeding", re), func(l string) bool {
		m := re.FindStringSubmatch(l)
		return m != nil && ok(m)
	})
}

// waitForPrinted reads the lines printed so far into output, each round,
// until one that match accepts, and returns it.
func waitForPrinted(t *testing.T, lines <-chan string, output, stderr *strings.Builder, timeout time.Duration, what string, match func(string) bool) string {
	t.Helper()
	return testutil.EventuallyValue(t, timeout, what, func() (string, error) {
		for {
			select {
			case l, open := <-lines:
				if !open {
					t.Fatalf("run-local ended before %s\nstdout:\n%s\nstderr:\n%s", what, output.String(), stderr.String())
				}
				output.WriteString(l + "\n")
				if match(l) {
					return l, nil
				}
			default:
				return "", fmt.Errorf("stdout:\n%s", output.String())
			}
		}
	})
}

// buildCmd builds the command called name (a directory of cmd) into dir.
func buildCmd(t *testing.T, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", out, "./cmd/"+name)
	build.Dir = repoRoot
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, msg)
	}
	return out
}

// buildManager builds cmd/manager into dir; "" runs without one while
// cmd/manager does not exist.
func buildManager(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "cmd", "manager")); err != nil {
		return ""
	}
	out := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", out, "./cmd/manager")
	build.Dir = repoRoot
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, msg)
	}
	return out
}

// childrenOf lists the pids whose parent is pid (from /proc/<pid>/stat).
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the ")" that closes the command name: state, ppid, ...
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(e.Name()); err == nil {
				kids = append(kids, child)
			}
		}
	}
	return kids
}

func commandOf(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "?"
	}
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// TestRolloutRefusesWhatItCannotRun: `make rollout-demo` without one of
// the processes it rolls exits 1 before starting anything, saying why.
func TestRolloutRefusesWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no manager", []string{"--manager", ""}, "the rollout needs the manager, the receiver agent and the prefill peer"},
		{"no prefill peer", []string{"--prefill-peer", ""}, "the rollout needs the manager, the receiver agent and the prefill peer"},
		{"only the files missing", nil, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			args := append([]string{"--rollout", "--kubeconfig", filepath.Join(tmp, "kc"), "--logs", tmp}, tc.args...)
			cmd := exec.Command(os.Args[0], args...)
			cmd.Dir = tmp // config/samples is not there: the pair and pod files are missing
			cmd.Env = append(os.Environ(), "PDTOPO_RUN_LOCAL_AS_MAIN=1")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("run-local %q: %v, want exit status 1\n%s", args, err, out)
			}
			for _, want := range []string{"config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml", "config/samples/decode/pod.yaml", tc.want} {
				if !strings.Contains(string(out), want) {
					t.Errorf("run-local %q does not say %q:\n%s", args, want, out)
				}
			}
			if _, err := os.Stat(filepath.Join(tmp, "kc")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a kubeconfig was written: the control plane started")
			}
		})
	}
}
