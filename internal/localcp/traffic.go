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
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// roomInterval is how often each engine rank opens a room: a modest rate
// that shows handshakes completing without loading a shared machine.
const roomInterval = 200 * time.Millisecond

// roomWait bounds how long one room may take before it counts as "stuck".
const roomWait = 10 * time.Second

// Traffic is the demo's data path for the sample decode pod's pair: the
// prefill peer (bin/prefill-peer playing the pair's prefill side on
// loopback), the pod's pdtopo-agent run from its own container spec as the
// kubelet would, and one goroutine per engine rank driving rooms through
// that rank's unix socket with the Go agent client.
type Traffic struct {
	Pair      client.ObjectKey
	Ranks     []int
	AgentArgv []string // the agent's command line as run (paths on this machine)
	// AgentLog and PeerLog are the two processes' logs in Options.LogDir.
	AgentLog, PeerLog string
	dir               string // the peer's manifest and contract
	peer              *controlplane.Process
	agent             *podAgent
	stopRooms         context.CancelFunc
	drivers           sync.WaitGroup

	mu       sync.Mutex
	outcomes map[string]int64 // "success", a failure code, or a client error kind
	started  time.Time        // when the room drivers started
	total    int64
}

// startTraffic starts the peer and the agent of demo's pod and the room
// drivers. On error, whatever it started is stopped again.
func startTraffic(ctx context.Context, c client.Client, o Options, demo *DecodeDemo, podIP string) (t *Traffic, err error) {
	if demo.Agent == nil {
		return nil, errors.New("the decode pod has no agent container to run")
	}
	pod := demo.Pod
	t = &Traffic{Pair: client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}, outcomes: map[string]int64{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.stop(o.StopTimeout))
			t = nil
		}
	}()
	var pair pdv1.PDPair
	if err := c.Get(ctx, t.Pair, &pair); err != nil {
		return t, fmt.Errorf("reading PDPair %s: %w", t.Pair, err)
	}
	// A pair judged from its contracts runs the prefill peer and the engine
	// ranks from those; any other from its plans.
	eng := engines.For(pair.Spec)
	contractWire := eng.ReadsContracts(pair.Spec)
	var plans *transferplan.PlanSet
	var prefillContract, decodeContract []byte
	if contractWire {
		if prefillContract, err = specContract(ctx, c, pair.Namespace, "prefill", pair.Spec.CacheContracts.Prefill); err != nil {
			return t, fmt.Errorf("PDPair %s: %w", t.Pair, err)
		}
		if decodeContract, err = specContract(ctx, c, pair.Namespace, "decode", pair.Spec.CacheContracts.Decode); err != nil {
			return t, fmt.Errorf("PDPair %s: %w", t.Pair, err)
		}
	} else if plans, err = planSet(eng, pair.Spec); err != nil {
		return t, fmt.Errorf("PDPair %s: %w", t.Pair, err)
	}
	if t.dir, err = os.MkdirTemp("", "pdtopo-run-"); err != nil {
		return t, err
	}

	// The prefill side: the peer binary, given the pair as a manifest.
	peerPort, err := controlplane.FreeLoopbackPorts(1)
	if err != nil {
		return t, err
	}
	manifest := filepath.Join(t.dir, "pdpair.yaml")
	data, err := yaml.Marshal(pdv1.PDPair{TypeMeta: metav1.TypeMeta{APIVersion: pdv1.GroupVersion.String(), Kind: "PDPair"},
		ObjectMeta: metav1.ObjectMeta{Name: pair.Name, Namespace: pair.Namespace}, Spec: pair.Spec})
	if err != nil {
		return t, err
	}
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		return t, err
	}
	contractFile := ""
	if contractWire {
		contractFile = filepath.Join(t.dir, "prefill-contract.json")
		if err := os.WriteFile(contractFile, prefillContract, 0o644); err != nil {
			return t, err
		}
	}
	args, err := peerArgs(&pair, contractWire, manifest, contractFile)
	if err != nil {
		return t, err
	}
	bootstrap := "127.0.0.1:" + strconv.Itoa(peerPort[0])
	t.PeerLog, t.AgentLog = "prefill-peer-"+pair.Name+".log", "agent-"+pair.Name+".log"
	if t.peer, err = controlplane.StartProcess("prefill peer", o.PeerPath,
		append(args, "--bootstrap-port", strconv.Itoa(peerPort[0]), "--quiet"), nil, o.LogDir, t.PeerLog); err != nil {
		return t, err
	}

	// The kubelet's part: the pod's agent container, its plan volume
	// projected from the pair's ConfigMaps and synced again as a kubelet does.
	if t.agent, err = startPodAgent(ctx, c, o, pod, demo.Agent, podIP, t.AgentLog); err != nil {
		return t, err
	}
	t.Ranks, t.AgentArgv = t.agent.Ranks, t.agent.Argv

	roomsCtx, cancel := context.WithCancel(context.Background())
	t.stopRooms = cancel
	t.mu.Lock()
	t.started = time.Now()
	t.mu.Unlock()
	engines := map[int]rankEngine{}
	if contractWire {
		if engines, err = contractEngines(decodeContract, t.Ranks); err != nil {
			return t, fmt.Errorf("PDPair %s: %w", t.Pair, err)
		}
	}
	for _, r := range t.Ranks {
		if !contractWire {
			snap, err := receiver.SnapshotFor(plans, r)
			if err != nil {
				return t, err
			}
			engines[r] = rankEngine{info: engineInfo(snap, r), req: agentclient.Request{KVIndices: []int64{3, 4, 5}, AuxIndex: 7}}
		}
		sock := filepath.Join(t.agent.Sockets, "rank-"+strconv.Itoa(r)+".sock")
		t.drivers.Add(1)
		go func() {
			defer t.drivers.Done()
			t.driveRank(roomsCtx, sock, bootstrap, engines[r])
		}()
	}
	return t, nil
}

// agentRanks reads the ranks from the agent's arguments.
func agentRanks(argv []string) (first, count int, err error) {
	count = 1
	for _, a := range argv[1:] {
		k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		switch k {
		case "first-rank", "engine-rank":
			first, err = strconv.Atoi(v)
		case "rank-count":
			count, err = strconv.Atoi(v)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("agent argument %q: %w", a, err)
		}
	}
	if count < 1 || count > 1024 {
		return 0, 0, fmt.Errorf("agent arguments %q: want --rank-count between 1 and 1024", argv)
	}
	return first, count, nil
}

// planSet is every decode rank's plan, as the pair's engine maps them.
func planSet(eng engine.Engine, spec pdv1.PDPairSpec) (*transferplan.PlanSet, error) {
	p, err := eng.Resolve(spec, engine.Inputs{})
	if err != nil {
		return nil, err
	}
	ranks, err := p.Map()
	if err != nil {
		return nil, err
	}
	if ranks.Plans() == nil {
		return nil, fmt.Errorf("engine %s publishes no plans for an agent to load", eng.Name())
	}
	return ranks.Plans().PlanSet()
}

// engineInfo is what a decode engine rank registers: its session and one
// (fake, never dereferenced: no KV bytes move here) buffer address per
// buffer of the pair's decode layout.
func engineInfo(snap receiver.PlanSnapshot, rank int) receiver.EngineInfo {
	info := receiver.EngineInfo{SessionID: fmt.Sprintf("127.0.0.1:%d", 17000+rank)}
	for i := range snap.Layout.DecodeKVItemLens {
		info.KVDataPtrs = append(info.KVDataPtrs, uint64(0x7f0000000000+i<<20))
	}
	for i := range snap.Layout.DecodeStateItemLens {
		info.StateDataPtrs = append(info.StateDataPtrs, uint64(0x7e0000000000+i<<20))
	}
	return info
}

// driveRank is one engine rank: register, then open, request, wait for and
// clear room after room, as every rank of a decode instance does for the
// same request ids.
func (t *Traffic) driveRank(ctx context.Context, sock, bootstrap string, engine rankEngine) {
	c := agentclient.New(sock, agentclient.Options{})
	defer c.Close()
	for ctx.Err() == nil {
		err := c.RegisterEngine(ctx, engine.info)
		if err == nil {
			break
		}
		// A refusal is shown in the table (as "register-<code>"), so that a
		// pair whose engine the agent rejects does not look merely idle.
		var api *agentclient.APIError
		if errors.As(err, &api) {
			t.record(ctx, "register-"+clientErrorKind(err))
		}
		sleepCtx(ctx, time.Second)
	}
	tick := time.NewTicker(roomInterval)
	defer tick.Stop()
	for room := int64(1); ctx.Err() == nil; room++ {
		t.record(ctx, oneRoom(ctx, c, bootstrap, room, engine.req))
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// oneRoom runs room to the end and names its outcome.
func oneRoom(ctx context.Context, c *agentclient.Client, bootstrap string, room int64, req agentclient.Request) string {
	code, _ := roomOutcome(ctx, c, bootstrap, room, req)
	return code
}

func clientErrorKind(err error) string {
	var api *agentclient.APIError
	if errors.As(err, &api) {
		return "refused-" + api.Code
	}
	var un *agentclient.UnavailableError
	if errors.As(err, &un) {
		return "agent-unavailable"
	}
	return "client-error"
}

func (t *Traffic) record(ctx context.Context, outcome string) {
	if ctx.Err() != nil {
		return // cut short by Stop: not a result
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total++
	t.outcomes[outcome]++
}

// Line is the pair's traffic for the live table: rooms per second (every
// rank's rooms, since the drivers started), successes, and failures by code.
func (t *Traffic) Line() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Over the time since the drivers started: a rate over the first few
	// rooms alone would read as hundreds per second.
	rate := 0.0
	if d := time.Since(t.started).Seconds(); d > 0 && !t.started.IsZero() {
		rate = float64(t.total) / d
	}
	var failed []string
	var nFailed int64
	for code, n := range t.outcomes {
		if code != "success" {
			failed = append(failed, fmt.Sprintf("%s=%d", code, n))
			nFailed += n
		}
	}
	slices.Sort(failed)
	line := fmt.Sprintf("%s/%s: %d engine ranks, %.1f rooms/s, %d succeeded, %d failed",
		t.Pair.Namespace, t.Pair.Name, len(t.Ranks), rate, t.outcomes["success"], nFailed)
	if len(failed) > 0 {
		line += " (" + strings.Join(failed, ", ") + ")"
	}
	return line
}

// Counts returns how many rooms succeeded and how many failed so far.
func (t *Traffic) Counts() (succeeded, failed int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outcomes["success"], t.total - t.outcomes["success"]
}

// stop ends the room drivers, then the agent and the peer, and removes the
// volumes' directory.
func (t *Traffic) stop(timeout time.Duration) error {
	if t.stopRooms != nil {
		t.stopRooms()
		t.drivers.Wait()
	}
	var errs []error
	if t.agent != nil {
		errs = append(errs, t.agent.stop(timeout))
	}
	if t.peer != nil {
		errs = append(errs, t.peer.Stop(timeout))
	}
	if t.dir != "" {
		errs = append(errs, os.RemoveAll(t.dir))
	}
	return errors.Join(errs...)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
