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

package main

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// planState is the plan every served rank runs, and what the agent knows
// about its source: /v1/agent, /readyz and the plan metrics read it.
type planState struct {
	ranks    []int
	managers []*receiver.Manager
	// decodeLayout is the layout the pod was admitted under, if given.
	decodeLayout *transferplan.Parallelism

	// log says when the publication's other plan sets are refused.
	log *slog.Logger

	mu       sync.Mutex
	hash     string
	pdpair   string
	loadedAt time.Time
	err      string
	// setsRefused is why the last publication read had other plan sets
	// that were not loaded (nil when they loaded or there were none).
	setsRefused *localapi.PlanSetsRefusal

	sourceOK    prometheus.Gauge
	failures    *prometheus.CounterVec
	loaded      prometheus.Gauge
	setsRefusal prometheus.Gauge
}

func newPlanState(ranks []int, managers []*receiver.Manager, reg prometheus.Registerer) *planState {
	s := &planState{
		ranks: ranks, managers: managers,
		sourceOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pdtopo_receiver_plan_source_current",
			Help: "1 when the agent runs the plan source's current content; 0 when the source is unreadable, deleted or refused and the last good plan is kept.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdtopo_receiver_plan_load_failures_total",
			Help: "Reads of the plan source that did not yield the plan in use, by stage (read: unreadable or not loadable; refused: the ranks refused it).",
		}, []string{"stage"}),
		loaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pdtopo_receiver_plan_loaded_timestamp_seconds",
			Help: "When the plan in use was installed (Unix seconds); 0 before any.",
		}),
	}
	s.setsRefusal = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdtopo_receiver_plan_sets_refused",
		Help: "1 when the publication last read has other plan sets (plansets.json, a rollout's) that were refused, so only its current set serves; /v1/agent's planSetsRefused says why.",
	})
	s.failures.WithLabelValues("read")
	s.failures.WithLabelValues("refused")
	reg.MustRegister(s.sourceOK, s.failures, s.loaded, s.setsRefusal)
	return s
}

// sets records whether the publication's other plan sets were refused, and
// logs when that changes: a rollout's older prefill layouts stop being
// served by this agent, which no room says until one fails.
func (s *planState) sets(p plansource.Plans) {
	var now *localapi.PlanSetsRefusal
	if p.SetsRefused != nil {
		now = &localapi.PlanSetsRefusal{Reason: reasonOf(p.SetsRefused), Message: p.SetsRefused.Error()}
		s.setsRefusal.Set(1)
	} else {
		s.setsRefusal.Set(0)
	}
	s.mu.Lock()
	was := s.setsRefused
	s.setsRefused = now
	s.mu.Unlock()
	switch {
	case now != nil && (was == nil || *was != *now) && s.log != nil:
		s.log.Warn("the publication's other plan sets are refused; serving its current set only",
			"pdpair", p.PDPair, "hash", p.Hash, "reason", now.Reason, "error", now.Message)
	case now == nil && was != nil && s.log != nil:
		s.log.Info("the publication's other plan sets load again", "pdpair", p.PDPair, "hash", p.Hash, "sets", 1+len(p.Alternates))
	}
}

// reasonOf is a refusal's stable code: the plan store's reason, or
// Unreadable when the sets could not be read at all.
func reasonOf(err error) string {
	if r := planstore.ReasonOf(err); r != "" {
		return string(r)
	}
	return "Unreadable"
}

// apply installs plans on every rank, or on none (receiver.InstallPlans):
// the ranks of a pod never run two plan sets, even when an engine
// registers while the plans are installed.
func (s *planState) apply(p plansource.Plans) error {
	if len(p.Ranks) != len(s.managers) {
		return fmt.Errorf("the plan source returned %d plans for %d ranks", len(p.Ranks), len(s.managers))
	}
	if err := receiver.InstallPlanSets(s.managers, p.Sets()); err != nil {
		return err
	}
	now := time.Now()
	s.mu.Lock()
	s.hash, s.pdpair, s.loadedAt = p.Hash, p.PDPair, now
	s.mu.Unlock()
	s.loaded.Set(float64(now.UnixNano()) / 1e9)
	return nil
}

// report records whether the source's current content is what runs.
func (s *planState) report(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
		s.sourceOK.Set(0)
	} else {
		s.sourceOK.Set(1)
	}
	s.mu.Lock()
	s.err = msg
	s.mu.Unlock()
}

func (s *planState) failed(stage string) { s.failures.WithLabelValues(stage).Inc() }

// Readiness is nil once every rank has a plan and none is shutting down.
// A broken source does not make the agent unready: it keeps serving its
// last good plan, which is the best the pod can do.
func (s *planState) Readiness() error {
	for _, m := range s.managers {
		if err := m.Readiness(); err != nil {
			return err
		}
	}
	return nil
}

func (s *planState) Info() localapi.AgentInfo {
	s.mu.Lock()
	info := localapi.AgentInfo{PlanHash: s.hash, PDPair: s.pdpair, Ranks: s.ranks, PlanError: s.err, PlanSetsRefused: s.setsRefused}
	if !s.loadedAt.IsZero() {
		info.PlanLoadedAt = s.loadedAt.UTC().Format(time.RFC3339)
	}
	s.mu.Unlock()
	info.Ready = s.Readiness() == nil
	info.EngineContracts = localapi.EngineContracts(s.ranks, s.EngineContract)
	if s.decodeLayout != nil {
		info.DecodeLayout = s.decodeLayout.String()
	}
	met := make([][]receiver.PrefillLayoutMet, len(s.managers))
	for i, m := range s.managers {
		met[i] = m.PrefillLayoutsMet()
	}
	info.PrefillLayoutsMet = localapi.PrefillLayoutsMet(met)
	return info
}

// EngineContract is the contract the engine of rank registered, nil when
// none did or the agent does not serve rank.
func (s *planState) EngineContract(rank int) []byte {
	for i, r := range s.ranks {
		if r == rank {
			return s.managers[i].EngineContract()
		}
	}
	return nil
}
