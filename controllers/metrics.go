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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// pdpairsByCompatibility counts PDPairs by their LayoutCompatible status.
	pdpairsByCompatibility = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pdtopo_pdpairs",
		Help: "PDPairs known to this manager, by whether their prefill and decode layouts are compatible.",
	}, []string{"compatible"})

	// planningBytesInFlight is the estimated memory of the plannings under
	// way (planMemory), bounded by --max-plan-memory.
	planningBytesInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdtopo_planning_bytes_in_flight",
		Help: "Estimated peak memory of the PDPair plannings under way, admitted up to the manager's --max-plan-memory.",
	})

	// liveContractBytesKept is what live reads keep: the contracts the
	// engines decode, once per SHA-256, counted against --max-plan-memory.
	liveContractBytesKept = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdtopo_live_contract_bytes_kept",
		Help: "Bytes of contracts read from live engines that the manager keeps (once per SHA-256), counted against its --max-plan-memory.",
	})

	// publishedPlanBytes is the size of every plan set written to ConfigMaps.
	publishedPlanBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "pdtopo_published_plan_bytes",
		Help:    "Bytes of plan data (index and shards) in a publication that created or updated ConfigMaps.",
		Buckets: prometheus.ExponentialBuckets(1024, 4, 10), // 1 KiB … 256 MiB
	})
)

func init() {
	metrics.Registry.MustRegister(pdpairsByCompatibility, planningBytesInFlight, liveContractBytesKept, publishedPlanBytes)
}

// compatibilityGauge keeps the gauge exact: it remembers each PDPair's last
// answer, so a PDPair that changes sides or disappears moves the counts.
type compatibilityGauge struct {
	mu    sync.Mutex
	pairs map[types.NamespacedName]bool
}

func newCompatibilityGauge() *compatibilityGauge {
	return &compatibilityGauge{pairs: map[types.NamespacedName]bool{}}
}

func (g *compatibilityGauge) set(key types.NamespacedName, compatible bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if was, ok := g.pairs[key]; ok && was == compatible {
		return
	}
	g.pairs[key] = compatible
	g.publish()
}

func (g *compatibilityGauge) forget(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.pairs[key]; !ok {
		return
	}
	delete(g.pairs, key)
	g.publish()
}

// publish sets the gauge from the remembered answers; the caller holds mu.
func (g *compatibilityGauge) publish() {
	counts := map[bool]float64{}
	for _, c := range g.pairs {
		counts[c]++
	}
	pdpairsByCompatibility.WithLabelValues("true").Set(counts[true])
	pdpairsByCompatibility.WithLabelValues("false").Set(counts[false])
}
