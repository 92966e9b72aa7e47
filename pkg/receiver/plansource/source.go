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

package plansource

import (
	"context"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Source loads the plans of the engine ranks an agent serves. Version is
// cheap and changes when the content may have changed; Load does the work.
type Source interface {
	// Describe names the source in logs and errors.
	Describe() string
	Version(ctx context.Context) (string, error)
	Load(ctx context.Context) (Plans, error)
}

// Notifier is a Source that can tell when it may have changed, so the
// agent follows updates by watching rather than by polling.
type Notifier interface {
	// Notify starts watching until ctx ends and calls changed (from any
	// goroutine, possibly more often than the content changes) whenever
	// the plans may have changed. It returns once the watch is in place.
	Notify(ctx context.Context, changed func()) error
}

// Plans are the engine ranks' plans from one publication.
type Plans struct {
	// PDPair is the pair they were published for ("" for a plan file).
	PDPair string
	// Hash is the plan set's hash (the PDPair's status.plan.hash).
	Hash string
	// Ranks[i] is the plan of the source's i-th engine rank, from the set
	// the agent runs first (the publication's current set when it is for
	// the agent's decode layout).
	Ranks []receiver.PlanSnapshot
	// Alternates are the other plan sets published for the agent's decode
	// layout, Alternates[k][i] for the i-th engine rank: the prefill
	// layouts still served during a rollout (receiver.InstallPlanSets).
	Alternates [][]receiver.PlanSnapshot
	// SetsRefused is why the publication's other plan sets (plansets.json,
	// served during a rollout) were not loaded although it has them:
	// refused signature, too large, malformed, a shard unreadable. Ranks
	// (the current set, which the status names) load regardless; nil when
	// every set loaded or the publication has one.
	SetsRefused error
}

// Sets are the plans as receiver.InstallPlanSets takes them: Ranks first.
func (p Plans) Sets() [][]receiver.PlanSnapshot {
	return append([][]receiver.PlanSnapshot{p.Ranks}, p.Alternates...)
}

// plansOfSets turns what the sets loader returned into Plans.
func plansOfSets(got planstore.EngineRankSets) Plans {
	p := Plans{PDPair: got.PDPair, Hash: got.Sets[0].PlanHash, Ranks: snapshots(got.Sets[0].Layout, got.Sets[0].PlanHash, got.Sets[0].Plans)}
	for _, s := range got.Sets[1:] {
		p.Alternates = append(p.Alternates, snapshots(s.Layout, s.PlanHash, s.Plans))
	}
	return p
}

// Loaded is the plans and the source version they were read at.
type Loaded struct {
	Plans   Plans
	Version string
}

// Load reads the version, then the plans. Reading the version first means
// an update racing with the load is seen as a newer version later.
func Load(ctx context.Context, src Source) (Loaded, error) {
	v, err := src.Version(ctx)
	if err != nil {
		return Loaded{}, err
	}
	p, err := src.Load(ctx)
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{Plans: p, Version: v}, nil
}

// snapshots pairs each engine rank with its plan from one plan set.
func snapshots(layout transferplan.LayoutRecord, hash string, plans []transferplan.RoutePlan) []receiver.PlanSnapshot {
	out := make([]receiver.PlanSnapshot, len(plans))
	for i := range plans {
		out[i] = receiver.PlanSnapshot{Layout: layout, Plan: plans[i], Hash: hash}
	}
	return out
}

// checkRanks refuses an empty or negative rank list before any reading.
func checkRanks(engineRanks []int) error {
	if len(engineRanks) == 0 {
		return fmt.Errorf("no engine ranks to load plans for")
	}
	for _, r := range engineRanks {
		if r < 0 {
			return fmt.Errorf("engine rank %d is negative", r)
		}
	}
	return nil
}

// decodeOptions are the loader options of a source given the pod's
// admitted decode layout (none when it has none).
func decodeOptions(decode *transferplan.Parallelism) []planstore.LoadOption {
	if decode == nil {
		return nil
	}
	return []planstore.LoadOption{planstore.ForDecodeLayout(*decode)}
}
