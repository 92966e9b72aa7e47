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
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
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
	// PlanSetsRefused says why the publication's other plan sets
	// (plansets.json, the layouts a rollout still serves) were not loaded
	// although it has them: a refused or missing signature, too large,
	// malformed, a shard unreadable. The current set (the plans PlanHash
	// names) serves regardless; absent when every set loaded or the
	// publication has one.
	PlanSetsRefused *PlanSetsRefusal `json:"planSetsRefused,omitempty"`
	// EngineContracts are the cache transfer contracts the engines of the
	// served ranks registered (the cache-contract wire), one per rank that
	// registered one, by rank; GET /v1/agent/contract?rank=R has the bytes.
	EngineContracts []EngineContract `json:"engineContracts,omitempty"`
	// DecodeLayout is the decode layout the pod was admitted under
	// ("tp=4,dp=1", the agent's --decode-layout); "" when not given. The
	// operator counts agents per layout from it.
	DecodeLayout string `json:"decodeLayout,omitempty"`
	// PrefillLayoutsMet are the layouts of the prefill instances the
	// agent's ranks currently hold (at most receiver.MaxPrefillLayoutsMet),
	// most instances first: which prefill layouts are in use mid-rollout.
	PrefillLayoutsMet []PrefillLayoutMet `json:"prefillLayoutsMet,omitempty"`
}

// PlanSetsRefusal is why plan sets were refused: a stable reason code (the
// plan store's, such as BadSignature or MalformedIndex, or Unreadable) and
// the message naming what was wrong.
type PlanSetsRefusal struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// PrefillLayoutMet is one prefill layout and how many prefill instances
// (bootstrap addresses) of it one rank of the agent holds, the most of
// any of its ranks.
type PrefillLayoutMet struct {
	Layout    string `json:"layout"`
	Instances int    `json:"instances"`
}

// PrefillLayoutsMet merges the ranks' reports: per layout the most
// instances any rank holds (every rank meets the same prefill instances,
// some sooner than others), most instances first, bounded as one rank's.
func PrefillLayoutsMet(ranks [][]receiver.PrefillLayoutMet) []PrefillLayoutMet {
	most := map[string]int{}
	var order []string
	for _, rank := range ranks {
		for _, l := range rank {
			k := l.Layout.String()
			if _, ok := most[k]; !ok {
				order = append(order, k)
			}
			most[k] = max(most[k], l.Instances)
		}
	}
	out := make([]PrefillLayoutMet, 0, len(order))
	for _, k := range order {
		out = append(out, PrefillLayoutMet{Layout: k, Instances: most[k]})
	}
	slices.SortStableFunc(out, func(a, b PrefillLayoutMet) int { return cmp.Compare(b.Instances, a.Instances) })
	return out[:min(len(out), receiver.MaxPrefillLayoutsMet)]
}

// EngineContract identifies the contract one rank's engine registered.
type EngineContract struct {
	Rank int `json:"rank"`
	// SHA256 is the hex SHA-256 of the contract's bytes as registered.
	SHA256 string `json:"sha256"`
	// Bytes is the contract's size (at most 256 KiB).
	Bytes int `json:"bytes"`
}

// EngineContracts summarises the contracts of ranks (contract(rank) is
// nil for a rank whose engine registered none).
func EngineContracts(ranks []int, contract func(rank int) []byte) []EngineContract {
	var out []EngineContract
	for _, r := range ranks {
		if c := contract(r); c != nil {
			sum := sha256.Sum256(c)
			out = append(out, EngineContract{Rank: r, SHA256: hex.EncodeToString(sum[:]), Bytes: len(c)})
		}
	}
	return out
}

// Pod is what the probe address reports on: the agent of a decode pod.
type Pod interface {
	Info() AgentInfo
	// EngineContract is the contract the engine of rank registered; nil
	// when it registered none or the agent does not serve rank.
	EngineContract(rank int) []byte
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
		{pdv1.AgentContractPath, map[string]http.HandlerFunc{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
			serveEngineContract(w, r, pod)
		}}},
	}
	if metrics != nil {
		routes = append(routes, route{"/metrics", map[string]http.HandlerFunc{http.MethodGet: metrics.ServeHTTP}})
	}
	return routes
}

// CodeNoEngineContract: the rank asked for has no registered contract (an
// engine on the v1 wire, not registered yet, or a rank the agent does not
// serve).
const CodeNoEngineContract = "NoEngineContract"

func serveEngineContract(w http.ResponseWriter, r *http.Request, pod Pod) {
	q := r.URL.Query()["rank"]
	rank, err := strconv.Atoi(firstOr(q, ""))
	if len(q) != 1 || err != nil || rank < 0 {
		writeJSONError(w, http.StatusBadRequest, CodeBadRequestBody, fmt.Sprintf("give one rank=R, a served engine rank (got %q)", q))
		return
	}
	c := pod.EngineContract(rank)
	if c == nil {
		info := pod.Info()
		msg := fmt.Sprintf("the engine of rank %d registered no contract", rank)
		if !slices.Contains(info.Ranks, rank) {
			msg = fmt.Sprintf("this agent serves ranks %v, not %d", info.Ranks, rank)
		}
		writeJSONError(w, http.StatusNotFound, CodeNoEngineContract, msg)
		return
	}
	writeRaw(w, http.StatusOK, c)
}

func firstOr(xs []string, fallback string) string {
	if len(xs) == 0 {
		return fallback
	}
	return xs[0]
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
