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
)

// TestKubeletRunsPodsCreatedWithKubectl is the by-hand check on `make
// run`: a decode pod created through the API server (as `kubectl create`
// does) is admitted by the webhook, its agent is run and the pod marked
// Running; two prefill-peer binaries announce themselves, the pair's P8
// (every byte checked) and a P2 the pair never had; the pod's rooms from
// P8 succeed and those from P2 are refused with LayoutMismatch, in the
// counts and rooms.log; deleting the pod stops its agent, and a stopped
// peer's announcement is gone.
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
	pod, err := readPodFile(filepath.Join(repoRoot, "config", "samples", "decode", "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(pod)
	if err := waitPairReady(ctx, s.Client(), client.ObjectKey{Namespace: key.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Client().Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	p2 := filepath.Join(t.TempDir(), "p2.yaml")
	var pair pdv1.PDPair
	if err := s.Client().Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}, &pair); err != nil {
		t.Fatal(err)
	}
	spec := pair.Spec.DeepCopy()
	spec.Prefill.TensorParallelSize = 2
	if err := writePairManifest(p2, pair.Namespace, pair.Name, *spec); err != nil {
		t.Fatal(err)
	}
	peers := []*exec.Cmd{startAnnouncedPeer(t, o, sample), startAnnouncedPeer(t, o, p2)}

	// Rooms from both, as each must end.
	var p8, p2c RoomCount
	waitFor(t, 90*time.Second, "P8 rooms ok and P2 rooms refused", func() (bool, string) {
		p8, p2c = RoomCount{}, RoomCount{}
		for _, c := range s.Kubelet.Counts() {
			switch {
			case strings.HasPrefix(c.Prefill, "p8-"):
				p8 = c
			case strings.HasPrefix(c.Prefill, "p2-"):
				p2c = c
			}
		}
		return p8.OK >= 5 && p2c.Failed["LayoutMismatch"] >= 2, s.Kubelet.Lines()
	})
	if p8.Bad() != 0 || p8.Pod != key.String() || p8.Decode != "TP4" {
		t.Errorf("P8 rooms to the pod: %+v, want all ok on %s (TP4)", p8, key)
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

	// The agent killed: it is restarted, as the kubelet restarts a
	// container, and the rooms succeed again.
	pid := kubeletAgentPid(s.Kubelet)
	if pid == 0 {
		t.Fatal("no agent process for the pod")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	okBefore := p8.OK
	waitFor(t, 30*time.Second, "the killed agent restarted and its rooms succeeding again", func() (bool, string) {
		var ok int64
		for _, c := range s.Kubelet.Counts() {
			if c.Prefill == p8.Prefill {
				ok = c.OK
			}
		}
		now := kubeletAgentPid(s.Kubelet)
		return now != pid && now != 0 && ok >= okBefore+5, s.Kubelet.Lines()
	})
	if !strings.Contains(s.Kubelet.Lines(), "(1 restarts;") {
		t.Errorf("the table does not count the restart:\n%s", s.Kubelet.Lines())
	}

	// The pod deleted: its agent stops.
	pid = kubeletAgentPid(s.Kubelet)
	if err := s.Client().Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the deleted pod's agent to stop", func() (bool, string) {
		return syscall.Kill(pid, 0) != nil && len(s.Kubelet.Counts()) == 0, s.Kubelet.Lines()
	})
	for _, p := range peers {
		_ = p.Process.Signal(os.Interrupt)
		_ = p.Wait()
	}
	if left, _ := filepath.Glob(filepath.Join(o.PrefillsDir, "*")); len(left) != 0 {
		t.Errorf("announcements left after the peers stopped: %v", left)
	}
	t.Logf("kubelet check ran in %s", time.Since(began).Round(time.Second))
}

func startAnnouncedPeer(t *testing.T, o Options, manifest string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(o.LogDir, "peer-"+filepath.Base(manifest)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd := exec.Command(o.PeerPath, "-f", manifest, "--check-transfers", "--bootstrap-port", "0", "--quiet", "--announce", o.PrefillsDir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

func kubeletAgentPid(k *Kubelet) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if d := p.roomDriver(); d != nil {
			return d.agent.Pid()
		}
	}
	return 0
}

func waitFor(t *testing.T, timeout time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, state := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; last:\n%s", what, timeout, state)
		}
		time.Sleep(200 * time.Millisecond)
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
