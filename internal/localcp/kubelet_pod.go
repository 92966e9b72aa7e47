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
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/announce"
)

// kubePod is one pod the Kubelet runs: its agent, supervised by one
// goroutine, and its rooms.
type kubePod struct {
	pod        *corev1.Pod // as admitted
	name, log  string
	slot       int
	ip, layout string

	cancel context.CancelFunc
	ctx    context.Context
	done   chan struct{}

	mu       sync.Mutex
	state    string // what the table says about its agent
	restarts int
	driver   *podDriver
	targets  map[string]*roomTarget // by announced instance
}

func newKubePod(pod *corev1.Pod, slot int, ip string) *kubePod {
	ctx, cancel := context.WithCancel(context.Background())
	return &kubePod{pod: pod, name: pod.Namespace + "/" + pod.Name, log: "agent-" + pod.Namespace + "-" + pod.Name + ".log",
		slot: slot, ip: ip, layout: pod.Annotations[pdv1.AnnotationDecodeLayout], ctx: ctx, cancel: cancel,
		done: make(chan struct{}), state: "starting", targets: map[string]*roomTarget{}}
}

// supervise runs the agent until the pod goes, restarting it when it
// exits (or fails to start) after a doubling backoff, as the kubelet does
// a container of restartPolicy Always (the native sidecar's).
func (p *kubePod) supervise(c client.Client, o Options, agent *corev1.Container) {
	defer close(p.done)
	ctx := p.ctx
	var a *podAgent
	defer func() {
		if d := p.roomDriver(); d != nil {
			d.stop()
		}
		if a != nil {
			_ = a.stop(o.StopTimeout)
		}
	}()
	backoff := restartBackoff
	for ctx.Err() == nil {
		var err error
		if a == nil {
			a, err = startPodAgent(ctx, c, o, p.pod, agent, p.ip, p.log)
		} else {
			err = a.restart(ctx, c, o)
		}
		if err == nil {
			p.running(ctx, c, a)
			began := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-a.proc.Exited():
			}
			if time.Since(began) > restartReset {
				backoff = restartBackoff
			}
			// The first line: the table has no room for the log's tail.
			why, _, _ := strings.Cut(fmt.Sprint(a.proc.ExitError()), "; last lines")
			err = fmt.Errorf("agent exited (%s)", why)
		}
		if ctx.Err() != nil {
			return
		}
		p.setState(fmt.Sprintf("%v; restarting in %s", err, backoff), true)
		step(o, "kubelet: pod %s: %v; restarting its agent in %s", p.name, err, backoff)
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, maxRestartBackoff)
	}
}

// running marks the pod Running, once, and starts its rooms; an error
// here leaves the agent running without rooms and says why.
func (p *kubePod) running(ctx context.Context, c client.Client, a *podAgent) {
	if p.roomDriver() != nil {
		p.setState("running", false)
		return
	}
	if err := markPodRunning(ctx, c, client.ObjectKeyFromObject(p.pod), p.ip); err != nil {
		p.setState("running; "+err.Error(), false)
		return
	}
	tp, err := decodeTP(p.pod)
	var eng map[int]rankEngine
	if err == nil {
		eng, err = rankEngines(ctx, c, client.ObjectKey{Namespace: p.pod.Namespace, Name: p.pod.Labels[pdv1.LabelPDPair]}, tp, a.Ranks)
	}
	if err != nil {
		p.setState("running, no rooms: "+err.Error(), false)
		return
	}
	d := newPodDriver(a, int(tp), eng)
	d.pod = p.name
	d.start()
	p.mu.Lock()
	p.driver = d
	p.mu.Unlock()
	p.setState("running", false)
}

func (p *kubePod) setState(s string, restarted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
	if restarted {
		p.restarts++
	}
}

func (p *kubePod) roomDriver() *podDriver {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.driver
}

// retarget makes the pod's rooms go to the announced instances of its
// decode layout (or of none named); a withdrawn instance gets no more
// rooms, its counts stay.
func (p *kubePod) retarget(ins []announce.Instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.driver == nil {
		return
	}
	want := map[string]announce.Instance{}
	for _, in := range ins {
		if in.Decode == "" || in.Decode == p.layout {
			want[in.Name] = in
		}
	}
	for name, t := range p.targets {
		if in, ok := want[name]; !ok || in.Bootstrap != t.Bootstrap {
			p.driver.remove(t)
			delete(p.targets, name)
		}
	}
	for name, in := range want {
		if p.targets[name] == nil {
			t := &roomTarget{Prefill: name, Bootstrap: in.Bootstrap}
			p.targets[name] = t
			p.driver.add(t)
		}
	}
}

func (p *kubePod) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%-40s %-15s %-10s agent %s (%d restarts; log %s)", p.name, p.ip, p.layout, p.state, p.restarts, p.log)
}

// stopAll ends the pod's rooms and agent and waits for them.
func (p *kubePod) stopAll() {
	p.cancel()
	<-p.done
}
