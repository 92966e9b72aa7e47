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

package controllers

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
)

// agentInfo is the part of the agent's GET /v1/agent answer (on its probe
// address) the operator reads; pkg/receiver/localapi/probe.go writes the
// whole shape. Decoded here rather than imported, so the manager
// stays free of the agent's cgo dependencies.
type agentInfo struct {
	PlanHash  string `json:"planHash"`
	Ready     bool   `json:"ready"`
	PlanError string `json:"planError"`
	// EngineContracts are the contracts the pod's engines registered
	// (livecontract.Agent reads the same answer).
	EngineContracts []livecontract.RankContract `json:"engineContracts"`
	// DecodeLayout and PrefillLayoutsMet are what the agent uses: counted
	// per generation (generations_usage.go).
	DecodeLayout      string             `json:"decodeLayout"`
	PrefillLayoutsMet []prefillLayoutMet `json:"prefillLayoutsMet"`
}

// prefillLayoutMet is one entry of the agent's prefillLayoutsMet.
type prefillLayoutMet struct {
	Layout    string `json:"layout"`
	Instances int    `json:"instances"`
}

// agentProber asks agents which plan they run, a bounded number at a time,
// each with a short timeout. It runs off the reconcile path: the fleet's
// probes in the background (decodefleet_probes.go), the decode contract's
// inside a live read (livecontracts_decode.go).
type agentProber struct {
	// client reads /v1/agent within its timeout and livecontract's size
	// cap (MaxAgentInfoBytes: the answer is a few hundred bytes; a pod that
	// streams more is not an agent to trust).
	client *livecontract.Client
	// concurrency is how many agents probeAll asks at once.
	concurrency int
	// budget bounds one probeAll; agents not answered by then are
	// reported as unreachable.
	budget time.Duration
}

// agentProbeTimeout bounds one probe (connection, headers and body).
const agentProbeTimeout = 2 * time.Second

func newAgentProber() *agentProber {
	return &agentProber{client: livecontract.NewClient(agentProbeTimeout), concurrency: 16, budget: 5 * time.Second}
}

// probeResult is one agent's answer, or why there is none (an error fit
// for the status: publicFailure).
type probeResult struct {
	info agentInfo
	err  error
}

// probeAll asks the agent of every pod given (each has an IP) for its info.
func (p *agentProber) probeAll(ctx context.Context, pods []*corev1.Pod) map[string]probeResult {
	ctx, cancel := context.WithTimeout(ctx, p.budget)
	defer cancel()
	results := make(map[string]probeResult, len(pods))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, p.concurrency)
	for _, pod := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				mu.Lock()
				results[pod.Name] = probeResult{err: fmt.Errorf("not asked within %s", p.budget)}
				mu.Unlock()
				return
			}
			info, err := p.probe(ctx, pod)
			mu.Lock()
			results[pod.Name] = probeResult{info: info, err: err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results
}

// probe asks one pod's agent; the error names the outcome only.
func (p *agentProber) probe(ctx context.Context, pod *corev1.Pod) (agentInfo, error) {
	var info agentInfo
	err := p.client.AgentInfo(ctx, agentProbeAddr(pod), &info)
	return info, publicFailure(err)
}

// agentProbeAddr is the agent's probe address: the pod IP, at the port its
// container declares under the probe port name (the kubelet probes the
// same port), or the default.
func agentProbeAddr(pod *corev1.Pod) string {
	port := int32(pdv1.AgentProbePort)
	if c := agentContainerSpec(pod); c != nil {
		for _, p := range c.Ports {
			if p.Name == pdv1.AgentProbePortName {
				port = p.ContainerPort
			}
		}
	}
	return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))
}
