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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// KubeletSync is how often a running agent's plan volume is projected
// again from the pair's ConfigMaps, as a kubelet's periodic pod sync does.
// A real kubelet syncs about once a minute (plus its ConfigMap cache's
// TTL); 2 s keeps an edit's effect on the demo visible within seconds.
const KubeletSync = 2 * time.Second

// podAgent is one admitted decode pod's pdtopo-agent container run as the
// kubelet runs it: the plan volume projected from the pair's ConfigMaps
// (again every KubeletSync), the socket directory, the container's env
// resolved, $(VAR) expanded in its command line, each mount path pointed
// at its volume's directory here.
type podAgent struct {
	Pod   *corev1.Pod
	IP    string
	Argv  []string // as run (paths on this machine)
	Ranks []int
	Probe string // http://IP:port of the agent's probe server
	Log   string // the log's name in Options.LogDir
	// Sockets is the socket volume's directory (rank-R.sock).
	Sockets string

	dir   string // the volumes' parent, removed on stop
	plans string // the plan volume's directory
	env   []string
	proc  *controlplane.Process

	stopSync context.CancelFunc
	synced   sync.WaitGroup
	mu       sync.Mutex
	syncErr  error // the last projection's failure, nil once one succeeds
}

// startPodAgent runs pod's agent container on podIP and waits for its
// readiness; on error whatever it started is stopped again.
func startPodAgent(ctx context.Context, c client.Client, o Options, pod *corev1.Pod, agent *corev1.Container, podIP, logName string) (a *podAgent, err error) {
	a = &podAgent{Pod: pod.DeepCopy(), IP: podIP, Log: logName}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.stop(o.StopTimeout))
			a = nil
		}
	}()
	// Short and absolute: unix socket paths are limited to 108 bytes.
	if a.dir, err = os.MkdirTemp("", "pdtopo-pod-"); err != nil {
		return a, err
	}
	volumes := map[string]string{
		pdv1.AgentPlansVolume:   filepath.Join(a.dir, "plans"),
		pdv1.AgentSocketsVolume: filepath.Join(a.dir, "sockets"),
	}
	a.Sockets = volumes[pdv1.AgentSocketsVolume]
	if err := os.Mkdir(a.Sockets, 0o755); err != nil {
		return a, err
	}
	a.plans = volumes[pdv1.AgentPlansVolume]
	if err := kubeletsim.MaterialiseVolume(ctx, c, a.Pod, pdv1.AgentPlansVolume, a.plans); err != nil {
		return a, err
	}
	facts := kubeletsim.PodFacts{PodIP: podIP}
	vars, env, err := kubeletsim.ContainerEnv(a.Pod, agent, facts)
	a.env = env
	if err != nil {
		return a, fmt.Errorf("agent container env: %w", err)
	}
	argv := kubeletsim.CommandLine(agent, vars)
	if len(argv) == 0 {
		return a, errors.New("the agent container has no command")
	}
	// The process has no mount namespace: each mount path in the arguments
	// points at that volume's directory here.
	for i := 1; i < len(argv); i++ {
		for _, m := range agent.VolumeMounts {
			if dir, ok := volumes[m.Name]; ok {
				argv[i] = strings.ReplaceAll(argv[i], m.MountPath, dir)
			}
		}
	}
	first, count, err := agentRanks(argv)
	if err != nil {
		return a, err
	}
	for r := first; r < first+count; r++ {
		a.Ranks = append(a.Ranks, r)
	}
	if a.Probe, err = kubeletsim.ProbeBase(agent, facts, pdv1.AgentProbePortName); err != nil {
		return a, err
	}
	a.Argv = append([]string{o.AgentPath}, argv[1:]...)
	return a, a.run(ctx, c, o)
}

// run starts the agent's process and the volume's sync, and waits until
// the agent is ready.
func (a *podAgent) run(ctx context.Context, c client.Reader, o Options) (err error) {
	proc, err := controlplane.StartProcess("decode agent", a.Argv[0], a.Argv[1:], a.env, o.LogDir, a.Log)
	if err != nil {
		return err
	}
	a.mu.Lock() // Pid reads it from other goroutines
	a.proc = proc
	a.mu.Unlock()
	a.startSync(c, a.plans)
	return a.proc.WaitReady(ctx, a.Probe+"/readyz", o.StartTimeout)
}

// restart stops the agent's process and starts it again from the same
// admitted pod after a sync of its volume, as the kubelet restarts a
// container: same volumes, same command line. Its log is appended to.
func (a *podAgent) restart(ctx context.Context, c client.Reader, o Options) error {
	a.stopSync()
	a.synced.Wait()
	if err := a.proc.Stop(o.StopTimeout); err != nil {
		return err
	}
	if err := kubeletsim.MaterialiseVolume(ctx, c, a.Pod, pdv1.AgentPlansVolume, a.plans); err != nil {
		return err
	}
	if !strings.HasSuffix(a.Log, "-restarted.log") {
		a.Log = strings.TrimSuffix(a.Log, ".log") + "-restarted.log"
	}
	return a.run(ctx, c, o)
}

// startSync projects the plan volume again every KubeletSync until stop.
func (a *podAgent) startSync(c client.Reader, dir string) {
	ctx, cancel := context.WithCancel(context.Background())
	a.stopSync = cancel
	a.synced.Add(1)
	go func() {
		defer a.synced.Done()
		tick := time.NewTicker(KubeletSync)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := kubeletsim.MaterialiseVolume(ctx, c, a.Pod, pdv1.AgentPlansVolume, dir)
			if ctx.Err() == nil {
				a.mu.Lock()
				a.syncErr = err
				a.mu.Unlock()
			}
		}
	}()
}

// SyncErr is why the last projection of the plan volume failed; nil when
// it succeeded. Like the kubelet, a failed sync leaves the volume as it was.
func (a *podAgent) SyncErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.syncErr
}

// Info is the agent's GET /v1/agent, what the operator reads.
func (a *podAgent) Info(ctx context.Context) (localapi.AgentInfo, error) {
	var info localapi.AgentInfo
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Probe+"/v1/agent", nil)
	if err != nil {
		return info, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return info, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("GET %s/v1/agent: %s", a.Probe, resp.Status)
	}
	return info, json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&info)
}

// Pid is the agent process's id (0 before it started).
func (a *podAgent) Pid() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc == nil {
		return 0
	}
	return a.proc.Pid()
}

// stop ends the periodic sync and the agent, and removes the volumes.
func (a *podAgent) stop(timeout time.Duration) error {
	if a.stopSync != nil {
		a.stopSync()
		a.synced.Wait()
		a.stopSync = nil
	}
	var errs []error
	if a.proc != nil {
		errs = append(errs, a.proc.Stop(timeout))
	}
	if a.dir != "" {
		errs = append(errs, os.RemoveAll(a.dir))
	}
	return errors.Join(errs...)
}
