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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
)

// startDecode creates a decode pod of PodFile (its name + suffix, its
// engine at --tp-size=decodeTP) through the API server, checks the
// webhook admitted it under that decode layout and told its agent so,
// runs the agent on the i-th pod address as the kubelet would, writes the
// pod's status as its kubelet would, and starts its rooms (no target yet).
func (r *rollout) startDecode(ctx context.Context, suffix string, decodeTP int32, i int) (*decodeInstance, error) {
	pod, err := newTemplatePod(r.o.PodFile, suffix, decodeTP)
	if err != nil {
		return nil, err
	}
	if err := r.s.Client().Create(ctx, pod); err != nil {
		return nil, fmt.Errorf("creating decode pod %s: %w", pod.Name, err)
	}
	agent := agentContainer(pod)
	layout := fmt.Sprintf("tp=%d,dp=1", decodeTP)
	if got := pod.Annotations[pdv1.AnnotationDecodeLayout]; got != layout || agent == nil || !slices.Contains(agent.Args, "--decode-layout="+layout) {
		return nil, fmt.Errorf("decode pod %s admitted under decode layout %q (agent %v), want %s and the agent told --decode-layout=%s", pod.Name, got, agent != nil, layout, layout)
	}
	ip, err := nthAddress(r.o.PodIP, i)
	if err != nil {
		return nil, err
	}
	a, err := startPodAgent(ctx, r.s.Client(), r.o.Options, pod, agent, ip, "agent-"+pod.Name+".log")
	if err != nil {
		return nil, err
	}
	d := &decodeInstance{agent: a}
	if err := markRunning(ctx, r.s.Client(), a.Pod, ip); err != nil {
		return d, errorsJoinStop(err, a, r.o.StopTimeout)
	}
	eng, err := rankEngines(ctx, r.s.Client(), r.key, decodeTP, a.Ranks)
	if err != nil {
		return d, errorsJoinStop(err, a, r.o.StopTimeout)
	}
	d.driver = newPodDriver(a, int(decodeTP), eng)
	d.driver.start()
	r.printf("decode pod %s admitted by the webhook: annotation %s=%s, %s\n", pod.Name, pdv1.AnnotationDecodeLayout, layout, pod.Annotations[pdv1.AnnotationInjected])
	r.printf("  its agent, run as the kubelet runs it (plan volume projected again every %s; log %s/%s):\n    %s\n",
		KubeletSync, r.o.LogDir, a.Log, strings.Join(a.Argv, " "))
	return d, nil
}

// newTemplatePod is the decode pod of file, named with suffix, its engine
// at --tp-size=decodeTP: the pod of a template edited to a new decode TP.
func newTemplatePod(file, suffix string, decodeTP int32) (*corev1.Pod, error) {
	pod, err := readPodFile(file)
	if err != nil {
		return nil, err
	}
	pod.Name += suffix
	for ci := range pod.Spec.Containers {
		args := pod.Spec.Containers[ci].Args
		for ai, a := range args {
			if strings.HasPrefix(a, "--tp-size=") {
				args[ai] = "--tp-size=" + strconv.Itoa(int(decodeTP))
			}
		}
	}
	return pod, nil
}

func errorsJoinStop(err error, a *podAgent, timeout time.Duration) error {
	if stopErr := a.stop(timeout); stopErr != nil {
		return fmt.Errorf("%w (and stopping its agent: %v)", err, stopErr)
	}
	return err
}

func agentContainer(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == pdv1.AgentContainerName {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// rankEngines are what the pod's engine ranks register: buffers of the
// pair's layout at decode TP decodeTP, and that TP (the engine says it).
func rankEngines(ctx context.Context, c client.Client, key client.ObjectKey, decodeTP int32, ranks []int) (map[int]rankEngine, error) {
	var p pdv1.PDPair
	if err := c.Get(ctx, key, &p); err != nil {
		return nil, err
	}
	spec := p.Spec.DeepCopy()
	spec.Decode.TensorParallelSize = decodeTP
	plans, err := planSet(engines.For(*spec), *spec)
	if err != nil {
		return nil, err
	}
	out := map[int]rankEngine{}
	for _, r := range ranks {
		snap, err := receiver.SnapshotFor(plans, r)
		if err != nil {
			return nil, err
		}
		info := engineInfo(snap, r)
		info.TPSize = int(decodeTP)
		out[r] = rankEngine{info: info, req: agentclient.Request{KVIndices: []int64{3, 4, 5}, AuxIndex: 7}}
	}
	return out, nil
}

// markRunning writes the status a kubelet writes for the running pod, so
// the operator's fleet probes reach its agent at ip.
func markRunning(ctx context.Context, c client.Client, pod *corev1.Pod, ip string) error {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	for _, ic := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: ic.Name, Ready: true, Started: ptr.To(true), Image: ic.Image, State: running})
	}
	for _, ct := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ct.Name, Ready: true, Started: ptr.To(true), Image: ct.Image, State: running})
	}
	if err := c.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("writing pod %s's status as its kubelet would: %w", pod.Name, err)
	}
	return nil
}

// startPeer runs bin/prefill-peer as a prefill instance of prefill TP
// prefillTP, checking the bytes each room writes for decode TP decodeTP.
// A peer checks one decode layout, so each (prefill, decode) layout pair
// gets its own: the agent picks its plan by the prefill's bootstrap
// answer, which two instances of one prefill layout give alike.
func (r *rollout) startPeer(ctx context.Context, p *pdv1.PDPair, prefillTP, decodeTP int32) (*roomTarget, error) {
	label := fmt.Sprintf("P%d×D%d", prefillTP, decodeTP)
	spec := p.Spec.DeepCopy()
	spec.Prefill.TensorParallelSize, spec.Decode.TensorParallelSize = prefillTP, decodeTP
	file := filepath.Join(r.dir, fmt.Sprintf("pdpair-p%d-d%d.yaml", prefillTP, decodeTP))
	if err := writePairManifest(file, p.Namespace, p.Name, *spec); err != nil {
		return nil, err
	}
	port, err := controlplane.FreeLoopbackPorts(1)
	if err != nil {
		return nil, err
	}
	args := []string{"-f", file, "--check-transfers", "--bootstrap-port", strconv.Itoa(port[0])}
	logName := fmt.Sprintf("prefill-peer-p%d-d%d.log", prefillTP, decodeTP)
	proc, err := controlplane.StartProcess("prefill peer "+label, r.o.PeerPath, args, nil, r.o.LogDir, logName)
	if err != nil {
		return nil, err
	}
	r.peers = append(r.peers, proc)
	r.byLabel[label] = proc
	addr := "127.0.0.1:" + strconv.Itoa(port[0])
	if err := proc.WaitReady(ctx, "http://"+addr+"/health", r.o.StartTimeout); err != nil {
		return nil, err
	}
	r.printf("prefill instance P%d at %s (checks every byte for decode TP %d; log %s/%s):\n    %s %s\n",
		prefillTP, addr, decodeTP, r.o.LogDir, logName, r.o.PeerPath, strings.Join(args, " "))
	return &roomTarget{Prefill: "P" + strconv.Itoa(int(prefillTP)), Bootstrap: addr}, nil
}

func writePairManifest(file, namespace, name string, spec pdv1.PDPairSpec) error {
	data, err := yaml.Marshal(pdv1.PDPair{TypeMeta: metav1.TypeMeta{APIVersion: pdv1.GroupVersion.String(), Kind: "PDPair"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec})
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// edit changes one role's TP in place, as `kubectl patch` (or edit) does.
func (r *rollout) edit(ctx context.Context, role string, tp int32) error {
	patch := fmt.Sprintf(`{"spec":{%q:{"tensorParallelSize":%d}}}`, role, tp)
	r.printf("$ kubectl patch pdp %s --type=merge -p '%s'\n", r.key.Name, patch)
	p := &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: r.key.Namespace, Name: r.key.Name}}
	if err := r.s.Client().Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		return fmt.Errorf("editing PDPair %s: %w", r.key, err)
	}
	return nil
}

// waitAgent waits until the pod's agent runs the plan set hash on every
// rank (its /v1/agent, as the operator reads it).
func (r *rollout) waitAgent(ctx context.Context, d *decodeInstance, hash string) error {
	began := time.Now()
	err := waitUntil(ctx, rolloutSettle, 200*time.Millisecond, func() error {
		info, err := d.agent.Info(ctx)
		if err == nil && info.PlanHash == hash && info.Ready && info.PlanError == "" {
			r.printf("agent of %s runs plan set %.12s (decode layout %s), %s after asking\n", d.agent.Pod.Name, hash, info.DecodeLayout, time.Since(began).Round(100*time.Millisecond))
			return nil
		}
		return fmt.Errorf("/v1/agent %+v (%v); last kubelet sync: %v", info, err, d.agent.SyncErr())
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("the agent of %s does not run plan set %.12s within %s: %w", d.agent.Pod.Name, hash, rolloutSettle, err)
	}
	return err
}

// waitRooms waits until each target has had RoomsPerStep more rooms to
// the pod (a limited target: all its rooms).
func (r *rollout) waitRooms(ctx context.Context, d *decodeInstance, targets ...*roomTarget) error {
	want := map[*roomTarget]int64{}
	for _, t := range targets {
		want[t] = d.driver.count(t).Rooms() + r.o.RoomsPerStep
		if t.Limit > 0 {
			want[t] = t.Limit
		}
	}
	timeout := rolloutSettle + time.Duration(r.o.RoomsPerStep*int64(len(targets)))*roomInterval
	err := waitUntil(ctx, timeout, 100*time.Millisecond, func() error {
		var short []string
		for _, t := range targets {
			if c := d.driver.count(t); c.Rooms() < want[t] {
				short = append(short, fmt.Sprintf("%s → %s: %d of %d rooms", t.Prefill, d.agent.Pod.Name, c.Rooms(), want[t]))
			}
		}
		if len(short) > 0 {
			return errors.New(strings.Join(short, "; "))
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("rooms did not end in time: %w", err)
	}
	return err
}

// target is the pod's target of that prefill label.
func (r *rollout) target(d *decodeInstance, prefill string) *roomTarget {
	d.driver.mu.Lock()
	defer d.driver.mu.Unlock()
	for t := range d.driver.counts {
		if t.Prefill == prefill {
			return t
		}
	}
	return nil
}
