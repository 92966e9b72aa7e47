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

package localcp

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

// managerProcess is bin/manager running as a child in its own process group,
// so a Ctrl-C in the terminal reaches only the parent, which stops the
// children in order (manager first, then kube-apiserver, then etcd).
type managerProcess struct {
	// name says which process this is in messages ("manager" unless set:
	// the same type runs the demo's prefill peer and decode agent).
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	// readyURL is the manager's readiness probe, metricsURL its metrics endpoint.
	readyURL, metricsURL string
	done                 chan struct{} // closed once the process has exited and been reaped
	exitErr              error         // valid after done is closed
}

// defaultManagerArgs are kubebuilder's standard manager flags: no leader
// election (a single local replica, and outside a cluster there is no
// namespace to hold the lease) and loopback-only metrics and probes on the
// given ports.
func defaultManagerArgs(metricsPort, probePort int) []string {
	return []string{
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metricsPort),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
	}
}

// startManager starts the manager against the kubeconfig at kubeconfigPath,
// with loopback metrics and probe ports it chooses, so waitReady can poll it.
func startManager(o Options, kubeconfigPath string) (*managerProcess, error) {
	kubeconfigPath, err := filepath.Abs(kubeconfigPath)
	if err != nil {
		return nil, err
	}
	m := &managerProcess{done: make(chan struct{})}
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		return nil, fmt.Errorf("choosing ports for the manager: %w", err)
	}
	args := append(defaultManagerArgs(ports[0], ports[1]), o.ManagerExtraArgs...)
	m.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0])
	m.readyURL = fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	if m.log, err = createLog(o.LogDir, "manager.log"); err != nil {
		return nil, err
	}
	m.logPath = m.log.Name()
	m.cmd = exec.Command(o.ManagerPath, args...)
	// KUBECONFIG rather than --kubeconfig: controller-runtime's config loader
	// honours it whether or not the manager registers a --kubeconfig flag.
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	m.cmd.SysProcAttr = childProcAttr()
	if err := m.cmd.Start(); err != nil {
		m.log.Close()
		return nil, fmt.Errorf("starting %s: %w", o.ManagerPath, err)
	}
	go func() {
		m.exitErr = m.cmd.Wait()
		m.log.Close()
		close(m.done)
	}()
	return m, nil
}

func (m *managerProcess) displayName() string {
	if m.name == "" {
		return "manager"
	}
	return m.name
}

// startChild runs path with args and env (added to this process's) as a
// child in its own process group, its output in logDir/logName.
func startChild(name, path string, args, env []string, logDir, logName string) (*managerProcess, error) {
	m := &managerProcess{name: name, done: make(chan struct{})}
	var err error
	if m.log, err = createLog(logDir, logName); err != nil {
		return nil, err
	}
	m.logPath = m.log.Name()
	m.cmd = exec.Command(path, args...)
	m.cmd.Env = append(os.Environ(), env...)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	m.cmd.SysProcAttr = childProcAttr()
	if err := m.cmd.Start(); err != nil {
		m.log.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() {
		m.exitErr = m.cmd.Wait()
		m.log.Close()
		close(m.done)
	}()
	return m, nil
}

// pid is the manager's process id.
func (m *managerProcess) pid() int { return m.cmd.Process.Pid }

// exited is closed when the manager has exited.
func (m *managerProcess) exited() <-chan struct{} { return m.done }

// exitError describes why the manager exited, with the end of its log.
func (m *managerProcess) exitError() error {
	status := "with status 0"
	if m.exitErr != nil {
		status = "with " + m.exitErr.Error()
	}
	return fmt.Errorf("the %s exited on its own (%s); last lines of %s:\n%s", m.displayName(), status, m.logPath, tailFile(m.logPath, 15))
}

// waitReady polls the readiness probe (ready once the manager's caches have
// synced) until it answers 200, the manager exits, or the timeout passes.
func (m *managerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.done:
			return m.exitError()
		case <-ctx.Done():
			return fmt.Errorf("manager not ready within %s (probe %s); see %s", timeout, m.readyURL, m.logPath)
		case <-tick.C:
			if probeOK(ctx, m.readyURL) {
				return nil
			}
		}
	}
}

// stop sends SIGTERM to the manager's process group, and SIGKILL if it has
// not exited within timeout. It returns once the process has been reaped.
func (m *managerProcess) stop(timeout time.Duration) error {
	select {
	case <-m.done:
		return nil // exited on its own; the caller reports why
	default:
	}
	pgid := -m.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling %s: %w", m.displayName(), err)
	}
	select {
	case <-m.done:
		return nil
	case <-time.After(timeout):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-m.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed; see %s", m.displayName(), timeout, m.logPath)
	}
}

func probeOK(ctx context.Context, url string) bool {
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

// freeLoopbackPorts asks the kernel for n distinct free ports on 127.0.0.1.
// They are released before use, so another process could take one first;
// the manager then fails to bind and says so in its log.
func freeLoopbackPorts(n int) ([]int, error) {
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

// tailFile returns the last n lines of a file, or a note that it is unreadable.
func tailFile(path string, n int) string {
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
