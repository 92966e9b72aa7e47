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

package webhooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// End to end, as the kubelet would run it: a decode pod admitted by the
// webhook; its pdtopo-agent container's own command, args and env (with
// $(VAR) expanded and the downward API resolved) run as the built
// receiver-agent binary, with the plan volume materialised from the
// ConfigMaps and the socket directory on disk; rooms complete for every
// engine rank of the pod against the prefill peer; the pair's status sees
// the agent current; then a spec change (prefill TP 8 → 4) reaches the
// running agent through the volume and new rooms use the new plan.
func TestDecodePodEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	pair := readyPair(t, ns, key.Name)
	pod := admit(t, fixtures.DecodePod(ns, "decode-0", key.Name).Obj())
	podIP := loopbackPodIP()

	// The kubelet's part: volumes on disk, the container started with its
	// spec, and the pod's status once the agent is ready.
	root := t.TempDir()
	volumes := map[string]string{pdv1.AgentPlansVolume: filepath.Join(root, "plans"), pdv1.AgentSocketsVolume: filepath.Join(root, "sockets")}
	if err := os.Mkdir(volumes[pdv1.AgentSocketsVolume], 0o777); err != nil {
		t.Fatal(err)
	}
	kubeletSync := func() {
		t.Helper()
		for _, v := range []string{pdv1.AgentPlansVolume} {
			if err := kubeletsim.MaterialiseVolume(context.Background(), k8s, pod, v, volumes[v]); err != nil {
				t.Fatal(err)
			}
		}
	}
	kubeletSync()
	agent := runAgentContainer(t, pod, podIP, volumes)
	agent.waitPlan(t, pair.Status.Plan.Hash)
	pod.Status = fixtures.RunningStatus(true)
	pod.Status.PodIP, pod.Status.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	waitAgentsCurrent(t, key, pair.Status.Plan.Hash)

	ranks := []int{0, 1, 2, 3} // ranks-per-pod defaults to the decode TP
	peer := startPeerFor(t, pair)
	completeRooms(t, agent, peer, ranks, pair, 101)
	wantTargetsPerRank(t, peer, ranks, 2) // P8 → D4: each decode rank pulls from two prefill ranks

	// The spec changes; the kubelet syncs the volume; the running agent
	// loads the new plan, and new rooms follow it.
	before := pair.Status.Plan.Hash
	pair = changeSpec(t, key, fixtures.GQAPair(ns, key.Name, 4, 4, 4, 512).Spec)
	if pair.Status.Plan.Hash == before {
		t.Fatal("the spec change did not change the plan")
	}
	kubeletSync()
	agent.waitPlan(t, pair.Status.Plan.Hash)
	waitAgentsCurrent(t, key, pair.Status.Plan.Hash)
	peer4 := startPeerFor(t, pair)
	completeRooms(t, agent, peer4, ranks, pair, 102)
	wantTargetsPerRank(t, peer4, ranks, 1) // P4 → D4: one prefill rank each
}

// loopbackPodIP is a random address of 127.0.0.0/8: the agent binds its
// probe port (fixed, 9440) and status sockets there as on a pod IP, without
// clashing with anything else on the machine using 127.0.0.1.
func loopbackPodIP() string {
	return fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), 1+rand.IntN(254), 1+rand.IntN(254))
}

var (
	agentBinOnce sync.Once
	agentBin     string
	agentBinErr  error
)

// builtAgent builds cmd/receiver-agent once per test binary.
func builtAgent(t *testing.T) string {
	t.Helper()
	agentBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pdtopo-e2e-agent-")
		if err != nil {
			agentBinErr = err
			return
		}
		agentBin = filepath.Join(dir, "receiver-agent")
		cmd := exec.Command("go", "build", "-o", agentBin, "./cmd/receiver-agent")
		cmd.Dir = env.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			agentBinErr = fmt.Errorf("go build ./cmd/receiver-agent: %v\n%s", err, out)
		}
	})
	if agentBinErr != nil {
		t.Fatal(agentBinErr)
	}
	return agentBin
}

// agentProcess is the pod's agent running as the kubelet would start it.
type agentProcess struct {
	cmd       *exec.Cmd
	probe     string // http://podIP:port
	socketDir string
	log       *strings.Builder
	mu        *sync.Mutex
}

// runAgentContainer starts the admitted pod's pdtopo-agent: the image's
// binary is the one built from this repository, the command line and
// environment are the container's own, and each volume's mount path in the
// arguments points at that volume's directory here (the process has no
// mount namespace of its own).
func runAgentContainer(t *testing.T, pod *corev1.Pod, podIP string, volumes map[string]string) *agentProcess {
	t.Helper()
	c := fixtures.AgentContainer(pod)
	if c == nil {
		t.Fatal("the admitted pod has no agent")
	}
	vars, envList, err := kubeletsim.ContainerEnv(pod, c, kubeletsim.PodFacts{PodIP: podIP})
	if err != nil {
		t.Fatal(err)
	}
	argv := kubeletsim.CommandLine(c, vars)
	if argv[0] != "/receiver-agent" {
		t.Fatalf("the agent's command is %q, want the image's /receiver-agent", argv[0])
	}
	for i := 1; i < len(argv); i++ {
		for _, m := range c.VolumeMounts {
			argv[i] = strings.ReplaceAll(argv[i], m.MountPath, volumes[m.Name])
		}
	}
	a := &agentProcess{socketDir: volumes[pdv1.AgentSocketsVolume], log: &strings.Builder{}, mu: &sync.Mutex{}}
	if a.probe, err = kubeletsim.ProbeBase(c, kubeletsim.PodFacts{PodIP: podIP}, pdv1.AgentProbePortName); err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(builtAgent(t), argv[1:]...)
	a.cmd.Env = append(envList, "PATH="+os.Getenv("PATH"))
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			a.mu.Lock()
			a.log.WriteString(sc.Text() + "\n")
			a.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		<-copied
		_ = a.cmd.Wait()
		if t.Failed() {
			t.Logf("agent %q log:\n%s", argv, a.logText())
		}
	})
	t.Logf("agent: %s %s", argv[0], strings.Join(argv[1:], " "))
	return a
}

func (a *agentProcess) logText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.String()
}

// waitPlan waits until the agent's probe address reports the plan, ready.
func (a *agentProcess) waitPlan(t *testing.T, hash string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "the agent runs plan "+hash[:12], func() error {
		resp, err := http.Get(a.probe + pdv1.AgentInfoPath)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var info struct {
			PlanHash  string `json:"planHash"`
			Ready     bool   `json:"ready"`
			PlanError string `json:"planError"`
			Ranks     []int  `json:"ranks"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
			return err
		}
		if info.PlanHash != hash || !info.Ready || len(info.Ranks) != 4 {
			return fmt.Errorf("/v1/agent: %+v", info)
		}
		return nil
	})
}

// waitAgentsCurrent waits for the operator to see the pod's agent on the plan.
func waitAgentsCurrent(t *testing.T, key client.ObjectKey, hash string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "DecodeAgentsCurrent for plan "+hash[:12], func() error {
		p := testutil.WaitCondition(t, k8s, settle, key, pdv1.PDPairReady, metav1.ConditionTrue)
		for _, c := range p.Status.Conditions {
			if c.Type == string(pdv1.PDPairDecodeAgentsCurrent) {
				if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, hash[:12]) || p.Status.DecodeFleet.AgentsCurrent != 1 {
					return fmt.Errorf("%s/%s: %s", c.Status, c.Reason, c.Message)
				}
				return nil
			}
		}
		return fmt.Errorf("no DecodeAgentsCurrent condition")
	})
}

func startPeerFor(t *testing.T, pair *pdv1.PDPair) *prefillpeer.Peer {
	t.Helper()
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return receivertest.StartPeer(t, l, nil)
}

// completeRooms runs one room on every engine rank of the pod at once, as a
// decode instance does (every rank opens the request's room), through each
// rank's unix socket, the way an engine calls the agent.
func completeRooms(t *testing.T, a *agentProcess, peer *prefillpeer.Peer, ranks []int, pair *pdv1.PDPair, room int64) {
	t.Helper()
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	peer.Script(room, prefillpeer.Success(room*10))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results := make([]agentclient.Room, len(ranks))
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := agentclient.New(filepath.Join(a.socketDir, "rank-"+strconv.Itoa(r)+".sock"), agentclient.Options{})
			defer c.Close()
			if errs[i] = c.RegisterEngine(ctx, receivertest.Engine(receivertest.Snapshot(t, l, r), r)); errs[i] != nil {
				return
			}
			if _, errs[i] = c.Open(ctx, peer.BootstrapAddr(), room); errs[i] != nil {
				return
			}
			if _, errs[i] = c.Request(ctx, room, receivertest.Request); errs[i] != nil {
				return
			}
			results[i], errs[i] = c.Wait(ctx, room, 20*time.Second)
		}()
	}
	wg.Wait()
	for i, r := range ranks {
		if errs[i] != nil {
			t.Fatalf("room %d on engine rank %d: %v", room, r, errs[i])
		}
		if results[i].Status != receiver.Success || results[i].BootstrapToken != room*10 {
			t.Fatalf("room %d on engine rank %d: %+v, want Success with token %d", room, r, results[i], room*10)
		}
	}
	for _, rank := range peer.Ranks() {
		if errs := rank.Errors(); len(errs) > 0 {
			t.Fatalf("the prefill peer found errors in what the agent sent: %v", errs)
		}
	}
}

// wantTargetsPerRank: every engine rank of the pod registered its own status
// socket with exactly the prefill ranks its plan names.
func wantTargetsPerRank(t *testing.T, peer *prefillpeer.Peer, ranks []int, targets int) {
	t.Helper()
	perPort := map[int]int{}
	for _, rank := range peer.Ranks() {
		for _, reg := range rank.Registrations() {
			perPort[reg.DecodeStatusPort]++
		}
	}
	if len(perPort) != len(ranks) {
		t.Fatalf("the prefill ranks saw %d decode status sockets, want one per engine rank of the pod (%d)", len(perPort), len(ranks))
	}
	for port, n := range perPort {
		if n != targets {
			t.Errorf("decode status socket %d registered with %d prefill ranks, want %d", port, n, targets)
		}
	}
}
