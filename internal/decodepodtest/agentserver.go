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

package decodepodtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// AgentProbe is a real HTTP server on loopback answering GET /v1/agent as
// an agent's probe address does, with a plan hash the test sets; for tests
// of what the operator reads from agents without running one.
type AgentProbe struct {
	*httptest.Server
	mu   sync.Mutex
	hash string
	err  string
}

// NewAgentProbe starts the server; Close it when done.
func NewAgentProbe(planHash string) *AgentProbe {
	a := &AgentProbe{hash: planHash}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pdv1.AgentInfoPath {
			http.NotFound(w, r)
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"planHash": a.hash, "ready": a.hash != "", "planError": a.err})
	}))
	return a
}

// Set changes the plan hash (and plan error) the agent reports.
func (a *AgentProbe) Set(planHash, planError string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hash, a.err = planHash, planError
}

// Port is the server's port on 127.0.0.1.
func (a *AgentProbe) Port() int32 {
	_, p, _ := net.SplitHostPort(a.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// WithAgent adds a pdtopo-agent native sidecar whose probe port is port, as
// the webhook would (but without the webhook), for tests of the operator.
func (b *PodBuilder) WithAgent(port int32) *PodBuilder {
	return b.InitContainer(corev1.Container{
		Name: pdv1.AgentContainerName, Image: "agent:test", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Ports: []corev1.ContainerPort{{Name: pdv1.AgentProbePortName, ContainerPort: port}},
	})
}

// RunningStatus is the status the kubelet would write for a running pod on
// 127.0.0.1 whose agent is (or is not) ready.
func RunningStatus(agentReady bool) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name: pdv1.AgentContainerName, Ready: agentReady, Started: ptr.To(true), Image: "agent:test", ImageID: "agent@sha256:0",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "engine", Ready: true, Image: "engine:test", ImageID: "engine@sha256:0",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}},
	}
}
