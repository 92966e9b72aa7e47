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
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// TestKubeletRunsPodsCreatedWithKubectl is the held-out check done by hand
// on `make run`: decode pods created through the API server (as `kubectl
// create` does) are admitted by the webhook, their agents run and the pods
// marked Running; prefill-peer binaries announce themselves. The pair's
// P8 (every byte checked) serves, a P2 the pair never had is refused with
// LayoutMismatch (in the counts and rooms.log); a killed agent is
// restarted; a prefill rollout (P4 beside P8) and a decode rollout (a TP 2
// pod beside the TP 4 one) keep every room succeeding; deleting a pod stops
// its agent, and a stopped peer's announcement is gone.
func TestKubeletRunsPodsCreatedWithKubectl(t *testing.T) {
	o := testOptions(t)
	if o.ManagerPath = buildManager(t); o.ManagerPath == "" {
		t.Skip("no cmd/manager")
	}
	o.PeerPath, o.AgentPath = buildCmd(t, "prefill-peer"), buildCmd(t, "receiver-agent")
	o.PodIP = fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), 1+rand.IntN(254), 1+rand.IntN(200))
	sample := filepath.Join(repoRoot, "config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	o.SamplesDir, o.DecodePodFiles, o.PrefillsDir = t.TempDir(), []string{}, filepath.Join(t.TempDir(), "local-prefills")
	copyFile(t, sample, filepath.Join(o.SamplesDir, "pair.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	began := time.Now()
	s, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	if err := s.StartKubelet(); err != nil {
		t.Fatal(err)
	}
	h := &byHand{t: t, s: s, o: o}
	pod := h.createPod(ctx, "", 4)
	key := client.ObjectKeyFromObject(pod)
	h.pair = client.ObjectKey{Namespace: key.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}
	h.announce(sample)
	h.announce(h.manifest(ctx, 2, 4))

	p8 := h.waitRooms("p8-", key.String(), 5)
	p2c := h.waitFailed("p2-", key.String(), "LayoutMismatch", 2)
	if p8.Decode != "TP4" {
		t.Errorf("P8 rooms to the pod: %+v, want them counted for TP4", p8)
	}
	if p2c.OK != 0 || p2c.Failed["LayoutMismatch"] != p2c.Rooms() || !strings.Contains(p2c.Messages["LayoutMismatch"], "prefill tensorParallelSize 8") {
		t.Errorf("P2 rooms to the pod: %+v, want every one LayoutMismatch naming the layout served", p2c)
	}
	var got corev1.Pod
	if err := s.Client().Get(ctx, key, &got); err != nil || got.Status.Phase != corev1.PodRunning || got.Status.PodIP != o.PodIP {
		t.Errorf("pod status %s %q (%v), want Running on %s as its kubelet writes it", got.Status.Phase, got.Status.PodIP, err, o.PodIP)
	}
	waitFor(t, 10*time.Second, "rooms.log to show both instances' rooms", func() (bool, string) {
		data, _ := os.ReadFile(filepath.Join(o.LogDir, "rooms.log"))
		return strings.Contains(string(data), p8.Prefill+" → "+key.String()) && strings.Contains(string(data), "LayoutMismatch="), string(data)
	})

	h.prefillRollout(ctx, key.String())
	tp2 := h.decodeRollout(ctx, key.String())
	for _, c := range s.Kubelet.Counts() {
		if !strings.HasPrefix(c.Prefill, "p2-") && c.Bad() != 0 {
			t.Errorf("%s → %s (%s): %d of %d rooms failed: %v", c.Prefill, c.Pod, c.Decode, c.Bad(), c.Rooms(), failures(c))
		}
	}
	t.Logf("rooms:\n%s", roomTable(s.Kubelet.Counts()))

	// The agent killed: it is restarted, as the kubelet restarts a
	// container, and the rooms succeed again.
	pid := kubeletAgentPid(s.Kubelet, key.String())
	before := h.count(p8.Prefill, key.String())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the agent (pid %d): %v", pid, err)
	}
	// Rooms under way when it died fail (agent-unavailable), as they
	// would in a pod; those after its restart succeed.
	waitFor(t, 60*time.Second, "rooms succeeding after the restart", func() (bool, string) {
		return h.count(p8.Prefill, key.String()).OK >= before.OK+5, s.Kubelet.Lines()
	})
	if now := kubeletAgentPid(s.Kubelet, key.String()); now == pid || !strings.Contains(s.Kubelet.Lines(), "(1 restarts;") {
		t.Errorf("agent pid %d after killing %d; the table does not count the restart:\n%s", now, pid, s.Kubelet.Lines())
	}

	// The old pod deleted: its agent stops, the new pod's runs on.
	pid = kubeletAgentPid(s.Kubelet, key.String())
	if err := s.Client().Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the deleted pod's agent to stop", func() (bool, string) {
		return syscall.Kill(pid, 0) != nil && kubeletAgentPid(s.Kubelet, key.String()) == 0, s.Kubelet.Lines()
	})
	if kubeletAgentPid(s.Kubelet, tp2) == 0 {
		t.Errorf("the agent of %s stopped with the other pod's", tp2)
	}
	for _, p := range h.peers {
		_ = p.Process.Signal(os.Interrupt)
		_ = p.Wait()
	}
	if left, _ := filepath.Glob(filepath.Join(o.PrefillsDir, "*")); len(left) != 0 {
		t.Errorf("announcements left after the peers stopped: %v", left)
	}
	t.Logf("kubelet check ran in %s", time.Since(began).Round(time.Second))
}

// prefillRollout: the pair edited to prefill TP 4; once the pod's agent
// runs the new publication, a P4 instance announced beside the P8 one.
func (h *byHand) prefillRollout(ctx context.Context, pod string) {
	h.patch(ctx, `{"spec":{"prefill":{"tensorParallelSize":4}}}`)
	p, err := waitPair(ctx, h.s.Client(), h.pair, "P4×D4 current, P8×D4 kept", wantGenerations("P4×D4 current", "P8×D4"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.waitPlanHash(ctx, pod, p.Status.Plan.Hash)
	p8 := h.count("p8-", pod)
	h.announce(h.manifest(ctx, 4, 4))
	h.waitRooms("p4-", pod, 5)
	h.waitRooms("p8-", pod, p8.OK+5)
}

// decodeRollout: the pair edited to decode TP 2; a pod of the new
// template; P4 and P8 instances checking bytes for decode TP 2. It returns
// the new pod's name.
func (h *byHand) decodeRollout(ctx context.Context, old string) string {
	h.patch(ctx, `{"spec":{"decode":{"tensorParallelSize":2}}}`)
	if _, err := waitPair(ctx, h.s.Client(), h.pair, "P4×D2 current, the D4 generations kept", wantGenerations("P4×D2 current", "P4×D4", "P8×D4")); err != nil {
		h.t.Fatal(err)
	}
	if err := waitPairReady(ctx, h.s.Client(), h.pair, time.Minute); err != nil {
		h.t.Fatal(err)
	}
	neu := client.ObjectKeyFromObject(h.createPod(ctx, "-tp2", 2)).String()
	before := h.count("p8-", old)
	h.announce(h.manifest(ctx, 4, 2))
	h.announce(h.manifest(ctx, 8, 2))
	for _, prefill := range []string{"p4-", "p8-"} {
		if c := h.waitRooms(prefill, neu, 5); c.Decode != "TP2" {
			h.t.Errorf("%s → %s counted for %s, want TP2", c.Prefill, neu, c.Decode)
		}
	}
	h.waitRooms(before.Prefill, old, before.OK+5)
	return neu
}

// byHand is what a person does on `make run` from another terminal.
type byHand struct {
	t     *testing.T
	s     *Session
	o     Options
	pair  client.ObjectKey
	peers []*exec.Cmd
}

// createPod creates the sample decode pod (its name + suffix, its engine
// at --tp-size=tp) as `kubectl create` does; the webhook admits it.
func (h *byHand) createPod(ctx context.Context, suffix string, tp int32) *corev1.Pod {
	pod, err := newTemplatePod(filepath.Join(repoRoot, "config", "samples", "decode", "pod.yaml"), suffix, tp)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := waitPairReady(ctx, h.s.Client(), client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}, time.Minute); err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.Client().Create(ctx, pod); err != nil {
		h.t.Fatal(err)
	}
	return pod
}

// manifest is the pair as it is now with the given TPs, as `kubectl get
// pdp -o yaml` and an edit give it.
func (h *byHand) manifest(ctx context.Context, prefillTP, decodeTP int32) string {
	var pair pdv1.PDPair
	if err := h.s.Client().Get(ctx, h.pair, &pair); err != nil {
		h.t.Fatal(err)
	}
	spec := pair.Spec.DeepCopy()
	spec.Prefill.TensorParallelSize, spec.Decode.TensorParallelSize = prefillTP, decodeTP
	file := filepath.Join(h.t.TempDir(), fmt.Sprintf("p%d-d%d.yaml", prefillTP, decodeTP))
	if err := writePairManifest(file, pair.Namespace, pair.Name, *spec); err != nil {
		h.t.Fatal(err)
	}
	return file
}

// announce runs `prefill-peer -f manifest --check-transfers
// --bootstrap-port 0 --announce DIR`.
func (h *byHand) announce(manifest string) {
	t := h.t
	log, err := os.Create(filepath.Join(h.o.LogDir, "peer-"+filepath.Base(manifest)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd := exec.Command(h.o.PeerPath, "-f", manifest, "--check-transfers", "--bootstrap-port", "0", "--quiet", "--announce", h.o.PrefillsDir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	h.peers = append(h.peers, cmd)
}

func (h *byHand) patch(ctx context.Context, patch string) {
	p := &pdv1.PDPair{}
	p.Namespace, p.Name = h.pair.Namespace, h.pair.Name
	if err := h.s.Client().Patch(ctx, p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		h.t.Fatal(err)
	}
}

// waitPlanHash waits until the pod's agent runs plan set hash, as `curl
// <pod IP>:9440/v1/agent` shows.
func (h *byHand) waitPlanHash(ctx context.Context, pod, hash string) {
	waitFor(h.t, 30*time.Second, "the agent of "+pod+" on plan set "+hash, func() (bool, string) {
		a := kubeletAgent(h.s.Kubelet, pod)
		if a == nil {
			return false, "no agent"
		}
		info, err := a.Info(ctx)
		return err == nil && info.PlanHash == hash, fmt.Sprintf("%+v %v", info, err)
	})
}

// count is the rooms from the instance named with prefix to pod.
func (h *byHand) count(prefix, pod string) RoomCount {
	for _, c := range h.s.Kubelet.Counts() {
		if strings.HasPrefix(c.Prefill, prefix) && c.Pod == pod {
			return c
		}
	}
	return RoomCount{}
}

func (h *byHand) waitRooms(prefix, pod string, ok int64) RoomCount {
	var c RoomCount
	waitFor(h.t, 60*time.Second, fmt.Sprintf("%d ok rooms %s… → %s", ok, prefix, pod), func() (bool, string) {
		c = h.count(prefix, pod)
		return c.OK >= ok || c.Bad() > 0, h.s.Kubelet.Lines()
	})
	if c.Bad() > 0 {
		h.t.Fatalf("rooms %s → %s failed:\n%s", c.Prefill, pod, h.s.Kubelet.Lines())
	}
	return c
}

func (h *byHand) waitFailed(prefix, pod, code string, n int64) RoomCount {
	var c RoomCount
	waitFor(h.t, 60*time.Second, fmt.Sprintf("%d rooms %s… → %s failed with %s", n, prefix, pod, code), func() (bool, string) {
		c = h.count(prefix, pod)
		return c.Failed[code] >= n, h.s.Kubelet.Lines()
	})
	return c
}

func kubeletAgent(k *Kubelet, pod string) *podAgent {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if d := p.roomDriver(); d != nil && p.name == pod {
			return d.agent
		}
	}
	return nil
}

func kubeletAgentPid(k *Kubelet, pod string) int {
	if a := kubeletAgent(k, pod); a != nil {
		return a.Pid()
	}
	return 0
}

func waitFor(t *testing.T, timeout time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	err := poll.Until(timeout, func() error {
		if done, state := ok(); !done {
			return errors.New(state)
		}
		return nil
	}, poll.Every(200*time.Millisecond))
	if err != nil {
		t.Fatalf("no %s within %s; last:\n%v", what, timeout, errors.Unwrap(err))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
