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
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Process is a child running in its own process group, so a Ctrl-C in the
// terminal reaches only the parent, which stops the children in order
// (manager first, then kube-apiserver, then etcd).
type Process struct {
	// Name says which process this is in messages ("manager", "prefill peer").
	Name string
	// LogPath is the file holding the process's output.
	LogPath string
	// ReadyURL and MetricsURL are a manager's readiness probe and metrics
	// endpoint (set by StartManager).
	ReadyURL, MetricsURL string

	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{} // closed once the process has exited and been reaped
	exitErr error         // valid after done is closed
}

// ManagerOptions say how to run the manager binary.
type ManagerOptions struct {
	// Path is the manager binary.
	Path string
	// Kubeconfig is passed as KUBECONFIG, which controller-runtime's config
	// loader honours whether or not the manager registers --kubeconfig.
	Kubeconfig string
	// LogDir receives manager.log.
	LogDir string
	// ExtraArgs follow the default flags (DefaultManagerArgs); a repeated
	// flag overrides the default. Overriding --health-probe-bind-address
	// leaves WaitReady unable to see readiness.
	ExtraArgs []string
}

// DefaultManagerArgs are kubebuilder's standard manager flags: no leader
// election (a single local replica, and outside a cluster there is no
// namespace to hold the lease) and loopback-only metrics and probes on the
// given ports.
func DefaultManagerArgs(metricsPort, probePort int) []string {
	return []string{
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
	}
}

// StartManager starts the manager with loopback metrics and probe ports it
// chooses, so WaitReady can poll it and MetricsURL scrape it.
func StartManager(o ManagerOptions) (*Process, error) {
	kubeconfig, err := filepath.Abs(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	ports, err := FreeLoopbackPorts(2)
	if err != nil {
		return nil, fmt.Errorf("choosing ports for the manager: %w", err)
	}
	args := append(DefaultManagerArgs(ports[0], ports[1]), o.ExtraArgs...)
	p, err := StartProcess("manager", o.Path, args, []string{"KUBECONFIG=" + kubeconfig}, o.LogDir, "manager.log")
	if err != nil {
		return nil, err
	}
	p.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0])
	p.ReadyURL = fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	return p, nil
}

// StartProcess runs path with args and env (added to this process's) as a
// child in its own process group, its output in logDir/logName.
func StartProcess(name, path string, args, env []string, logDir, logName string) (*Process, error) {
	p := &Process{Name: name, done: make(chan struct{})}
	var err error
	if p.log, err = CreateLog(logDir, logName); err != nil {
		return nil, err
	}
	p.LogPath = p.log.Name()
	p.cmd = exec.Command(path, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = childProcAttr()
	if err := p.cmd.Start(); err != nil {
		p.log.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		p.log.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitError describes why the process exited, with the end of its log.
func (p *Process) ExitError() error {
	status := "with status 0"
	if p.exitErr != nil {
		status = "with " + p.exitErr.Error()
	}
	return fmt.Errorf("the %s exited on its own (%s); last lines of %s:\n%s", p.Name, status, p.LogPath, TailFile(p.LogPath, 15))
}

// WaitReady polls url until it answers 200, the process exits, or the
// timeout passes; empty url is the manager's readiness probe (ready once its
// caches have synced).
func (p *Process) WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	if url == "" {
		url = p.ReadyURL
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s (probe %s); see %s", p.Name, timeout, url, p.LogPath)
		case <-tick.C:
			if ProbeOK(ctx, url) {
				return nil
			}
		}
	}
}

// Stop sends SIGTERM to the process group, and SIGKILL if the process has
// not exited within timeout. It returns once the process has been reaped.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.done:
		return nil // exited on its own; the caller reports why
	default:
	}
	pgid := -p.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling %s: %w", p.Name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed; see %s", p.Name, timeout, p.LogPath)
	}
}

// ProbeOK reports whether a GET of url answers 200.
func ProbeOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// FreeLoopbackPorts asks the kernel for n distinct free ports on 127.0.0.1.
// They are released before use, so another process could take one first;
// the process given one then fails to bind and says so in its log.
func FreeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// TailFile returns the last n lines of a file, or a note that it is unreadable.
func TailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("  ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
