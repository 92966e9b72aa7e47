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

package localapi

import (
	"errors"
	"net/http"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// AgentInfo is GET /v1/agent on the probe address: what the operator reads
// to tell which decode pods' agents run the current plan.
type AgentInfo struct {
	// PlanHash is the hash of the plan set every served rank runs (the
	// PDPair's status.plan.hash); "" until a plan is loaded.
	PlanHash string `json:"planHash"`
	// PDPair is the pair the plans were published for ("" for a plan file).
	PDPair string `json:"pdpair"`
	// Ranks are the engine ranks this agent serves.
	Ranks []int `json:"ranks"`
	// Ready is what /readyz answers: every rank has a plan.
	Ready bool `json:"ready"`
	// PlanLoadedAt is when the plan in use was installed (RFC 3339); ""
	// until a plan is loaded.
	PlanLoadedAt string `json:"planLoadedAt"`
	// PlanError is why the plan source's current content is not what the
	// agent runs (unreadable, deleted, malformed, refused); "" when it is.
	// The agent keeps its last good plan meanwhile.
	PlanError string `json:"planError"`
}

// Pod is what the probe address reports on: the agent of a decode pod.
type Pod interface {
	Info() AgentInfo
	// Readiness is nil once every served rank has a plan.
	Readiness() error
}

// ProbeHandler serves the probe address: /healthz, /readyz, /metrics (when
// metrics is not nil) and /v1/agent. It is reachable from outside the pod
// (the kubelet, Prometheus, the operator), so it never serves the engine
// API: that stays on the pod-local unix sockets.
func ProbeHandler(pod Pod, metrics http.Handler) http.Handler {
	return newMux(probeRoutes(pod, metrics), "no such endpoint on the probe address (the engine API is on the pod's unix sockets): ")
}

func probeRoutes(pod Pod, metrics http.Handler) []route {
	routes := []route{
		{"/healthz", map[string]http.HandlerFunc{http.MethodGet: healthz}},
		{"/readyz", map[string]http.HandlerFunc{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) {
			if err := pod.Readiness(); err != nil {
				writeJSONError(w, http.StatusServiceUnavailable, errorCode(err), err.Error())
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		}}},
		{"/v1/agent", map[string]http.HandlerFunc{http.MethodGet: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, pod.Info())
		}}},
	}
	if metrics != nil {
		routes = append(routes, route{"/metrics", map[string]http.HandlerFunc{http.MethodGet: metrics.ServeHTTP}})
	}
	return routes
}

// errorCode is the stable code of a *receiver.Error in err's chain, or
// CodeInternalError.
func errorCode(err error) string {
	var re *receiver.Error
	if errors.As(err, &re) {
		return string(re.Code)
	}
	return CodeInternalError
}
