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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/announce"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// What run-local's kubelet holds: a namespace user can create pods, and
// each runs a process here, so their number is bounded.
const (
	// MaxKubeletPods is how many decode pods get their agents run at once;
	// more are refused with a printed reason until one goes.
	MaxKubeletPods = 16
	// kubeletPoll is how often the pods and announcements are read.
	kubeletPoll = time.Second
	// Agent restarts back off as the kubelet's do (doubling from 1 s),
	// bounded lower than its 5 minutes to suit a demo.
	restartBackoff    = time.Second
	maxRestartBackoff = 30 * time.Second
	// an agent that ran this long restarts without its backoff so far.
	restartReset = 10 * time.Second
)

// Kubelet plays the kubelet for every decode pod the webhook admitted
// with the agent sidecar, other than those run-local runs itself: it runs
// each pod's agent (podAgent) on a loopback address of its own, writes the
// pod's status as Running, restarts an agent that exits, stops it when the
// pod is deleted, and drives rooms from every prefill instance announced
// in a directory (internal/announce) to every pod of the decode layout the
// instance checks.
type Kubelet struct {
	c        client.Client
	o        Options
	dir      string             // the announcements
	skip     map[types.UID]bool // pods whose agents run elsewhere
	firstIP  int                // the first pod's address index after o.PodIP
	roomsLog string

	stop context.CancelFunc
	done chan struct{}

	mu        sync.Mutex
	pods      map[types.UID]*kubePod
	refused   map[types.UID]string
	prefills  []announce.Instance
	announced error // the announcements refused, nil when none
}

// startKubelet starts the loop; Stop ends it and every agent it runs.
func startKubelet(c client.Client, o Options, dir string, skip map[types.UID]bool, firstIP int) (*Kubelet, error) {
	roomsLog := filepath.Join(o.LogDir, "rooms.log")
	if err := os.WriteFile(roomsLog, nil, 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kubelet{c: c, o: o, dir: dir, skip: skip, firstIP: firstIP, roomsLog: roomsLog, stop: cancel,
		done: make(chan struct{}), pods: map[types.UID]*kubePod{}, refused: map[types.UID]string{}}
	go k.loop(ctx)
	return k, nil
}

func (k *Kubelet) loop(ctx context.Context) {
	defer close(k.done)
	tick := time.NewTicker(kubeletPoll)
	defer tick.Stop()
	var logged string
	for n := 0; ctx.Err() == nil; n++ {
		if err := k.syncPods(ctx); err != nil && ctx.Err() == nil {
			step(k.o, "kubelet: listing pods: %v", err)
		}
		k.syncPrefills()
		if n%5 == 0 { // rooms.log: what the table shows, when it changed
			if now := k.Lines(); now != logged {
				logged = now
				appendFile(k.roomsLog, "== "+time.Now().Format(time.TimeOnly)+"\n"+now)
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// syncPods starts the agents of new admitted pods and stops those of pods
// gone (deleted, or terminating).
func (k *Kubelet) syncPods(ctx context.Context) error {
	var list corev1.PodList
	// The webhook injects the agent only into pods labelled with their pair.
	if err := k.c.List(ctx, &list, client.HasLabels{pdv1.LabelPDPair}); err != nil {
		return err
	}
	seen := map[types.UID]bool{}
	for i := range list.Items {
		pod := &list.Items[i]
		agent := agentContainer(pod)
		if agent == nil || pod.Annotations[pdv1.AnnotationInjected] == "" || k.skip[pod.UID] || pod.DeletionTimestamp != nil {
			continue
		}
		seen[pod.UID] = true
		k.admit(pod, agent)
	}
	k.mu.Lock()
	var gone []*kubePod
	for uid, p := range k.pods {
		if !seen[uid] {
			gone = append(gone, p)
			delete(k.pods, uid)
		}
	}
	for uid := range k.refused {
		if !seen[uid] {
			delete(k.refused, uid)
		}
	}
	k.mu.Unlock()
	for _, p := range gone {
		step(k.o, "kubelet: pod %s is gone; stopping its agent", p.name)
		p.stopAll()
	}
	return nil
}

// admit starts the pod's agent unless it runs or the bound is reached.
func (k *Kubelet) admit(pod *corev1.Pod, agent *corev1.Container) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pods[pod.UID] != nil || k.refused[pod.UID] != "" {
		return
	}
	slot := k.freeSlot()
	if slot < 0 {
		k.refused[pod.UID] = fmt.Sprintf("pod %s/%s: its agent is not run: run-local runs at most %d decode pods' agents; delete one", pod.Namespace, pod.Name, MaxKubeletPods)
		step(k.o, "kubelet: %s", k.refused[pod.UID])
		return
	}
	ip, err := nthAddress(k.o.PodIP, k.firstIP+slot)
	if err != nil {
		k.refused[pod.UID] = fmt.Sprintf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
		step(k.o, "kubelet: %s", k.refused[pod.UID])
		return
	}
	p := newKubePod(pod.DeepCopy(), slot, ip)
	k.pods[pod.UID] = p
	step(k.o, "kubelet: running the agent of pod %s on %s (log %s/%s)", p.name, ip, k.o.LogDir, p.log)
	go p.supervise(k.c, k.o, agent.DeepCopy())
}

func (k *Kubelet) freeSlot() int {
	used := map[int]bool{}
	for _, p := range k.pods {
		used[p.slot] = true
	}
	for s := range MaxKubeletPods {
		if !used[s] {
			return s
		}
	}
	return -1
}

// syncPrefills reads the announcements and makes each running pod's
// targets the instances of its decode layout.
func (k *Kubelet) syncPrefills() {
	ins, err := announce.Read(k.dir)
	k.mu.Lock()
	if errText(err) != errText(k.announced) && err != nil {
		step(k.o, "kubelet: announcements in %s refused:\n%v", k.dir, err)
	}
	k.prefills, k.announced = ins, err
	pods := slices.Collect(maps.Values(k.pods))
	k.mu.Unlock()
	for _, p := range pods {
		p.retarget(ins)
	}
}

// Counts are the rooms of every pod run here, per announced instance.
func (k *Kubelet) Counts() []RoomCount {
	k.mu.Lock()
	pods := slices.Collect(maps.Values(k.pods))
	k.mu.Unlock()
	slices.SortFunc(pods, func(a, b *kubePod) int { return strings.Compare(a.name, b.name) })
	var out []RoomCount
	for _, p := range pods {
		if d := p.roomDriver(); d != nil {
			out = append(out, d.Counts()...)
		}
	}
	return out
}

// Lines are the pods run here and their rooms, for the live table and
// rooms.log.
func (k *Kubelet) Lines() string {
	k.mu.Lock()
	pods := slices.Collect(maps.Values(k.pods))
	refused := slices.Sorted(maps.Values(k.refused))
	prefills := slices.Clone(k.prefills)
	announced := k.announced
	k.mu.Unlock()
	slices.SortFunc(pods, func(a, b *kubePod) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	fmt.Fprintf(&b, "decode pods run here as the kubelet would (%d of at most %d):\n", len(pods), MaxKubeletPods)
	for _, p := range pods {
		b.WriteString("  " + p.line() + "\n")
	}
	for _, r := range refused {
		b.WriteString("  " + r + "\n")
	}
	fmt.Fprintf(&b, "prefill instances announced in %s: %d\n", k.dir, len(prefills))
	for _, in := range prefills {
		fmt.Fprintf(&b, "  %s at %s (prefill %s, rooms to decode %s)\n", in.Name, in.Bootstrap, orText(in.Prefill, "?"), orText(in.Decode, "pods of any layout"))
	}
	if announced != nil {
		b.WriteString(indent(announced.Error()) + "\n")
	}
	if rooms := k.Counts(); len(rooms) > 0 {
		b.WriteString("rooms (announced prefill instance → decode pod), one every 200 ms per pod:\n" + roomTable(rooms) + "\n")
	}
	return b.String()
}

// Stop ends the loop, then every pod's rooms and agent, and waits for them.
func (k *Kubelet) Stop() {
	k.stop()
	<-k.done
	k.mu.Lock()
	pods := slices.Collect(maps.Values(k.pods))
	k.pods = map[types.UID]*kubePod{}
	k.mu.Unlock()
	for _, p := range pods {
		p.stopAll()
	}
}

// markPodRunning writes the status a kubelet writes for a running pod on
// the pod as it is now (the manager may have written it since).
func markPodRunning(ctx context.Context, c client.Client, key client.ObjectKey, ip string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pod corev1.Pod
		if err := c.Get(ctx, key, &pod); err != nil {
			return err
		}
		return markRunning(ctx, c, &pod, ip)
	})
}

// decodeTP is the TP of the decode layout the pod was admitted under.
func decodeTP(pod *corev1.Pod) (int32, error) {
	s := pod.Annotations[pdv1.AnnotationDecodeLayout]
	l, err := transferplan.ParseParallelism(s)
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %w", pdv1.AnnotationDecodeLayout, err)
	}
	return int32(l.TPSize), nil
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(text)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
