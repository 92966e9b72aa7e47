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

package receiver

import (
	"errors"
	"fmt"
	"sync"
)

// installMu serialises InstallPlans calls, so that two of them never take
// the engine locks of the same managers in different orders.
var installMu sync.Mutex

// installPause, when set (by tests only), runs while InstallPlans holds
// every engine lock, before it looks at the registered engines.
var installPause func()

// InstallPlans installs snaps[i] on managers[i], on every one or on none:
// the engine ranks of one pod never run two plan sets. Each manager's
// engine lock is held from the check of the registered engines to the last
// install, so an engine that registers meanwhile waits and is then checked
// against the new plan. (Checking every rank first and installing after,
// without the locks, let a registration in between make one rank refuse a
// plan the others had installed.) Rooms already open keep the plan they
// were opened with; caches learned for the old plan are dropped.
func InstallPlans(managers []*Manager, snaps []PlanSnapshot) error {
	return InstallPlanSets(managers, [][]PlanSnapshot{snaps})
}

// InstallPlanSets is InstallPlans of several plan sets at once: sets[k][i]
// is set k's plan for managers[i], sets[0] the current set (PlanHash).
// Every rank then serves a prefill of any of the sets' layouts, each room
// with the set its prefill's answer picks; every set must pass every check
// a single plan passes, and the current set the engine's too (fitViews).
func InstallPlanSets(managers []*Manager, sets [][]PlanSnapshot) error {
	if len(sets) == 0 {
		return fmt.Errorf("no plan set to install")
	}
	views, err := checkPlanSets(managers, sets)
	if err != nil {
		return err
	}
	installMu.Lock()
	defer installMu.Unlock()
	for _, m := range managers {
		m.engMu.Lock()
		defer m.engMu.Unlock()
	}
	if installPause != nil {
		installPause()
	}
	var errs []error
	for i, m := range managers {
		if eng := m.engine.Load(); eng != nil {
			var err error
			if views[i], err = m.fitViews(eng, views[i]); err != nil {
				errs = append(errs, rankError(managers, i, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i, m := range managers {
		snap := sets[0][i]
		m.routing.Store(&routing{view: views[i][0], peers: newPeerTable(views[i])})
		m.log.Info("route plan installed", "engineRank", m.cfg.EngineRank, "decodeTPRank", snap.Plan.DecodeTPRank, "kind", snap.Plan.PlanKind,
			"targets", len(snap.Plan.Targets), "idle", len(snap.Plan.IdlePrefillTPRanks), "hash", shortHash(snap.Hash), "sets", len(sets))
	}
	return nil
}

// checkPlanSets prepares every set's plan of every manager: views[i] are
// managers[i]'s, the current set first.
func checkPlanSets(managers []*Manager, sets [][]PlanSnapshot) ([][]*routeView, error) {
	seen := make(map[*Manager]bool, len(managers))
	views := make([][]*routeView, len(managers))
	var errs []error
	for k, snaps := range sets {
		if len(managers) != len(snaps) {
			return nil, fmt.Errorf("%d plans for %d engine ranks", len(snaps), len(managers))
		}
		for i, m := range managers {
			if k == 0 && seen[m] {
				return nil, fmt.Errorf("engine rank %d is given two plans", m.cfg.EngineRank)
			}
			seen[m] = true
			v, err := m.checkPlan(snaps[i])
			if err != nil {
				errs = append(errs, rankError(managers, i, inSet(k, err)))
			}
			views[i] = append(views[i], v)
		}
	}
	return views, errors.Join(errs...)
}

// inSet names the plan set of an error, when it is not the current one.
func inSet(k int, err error) error {
	if k == 0 {
		return err
	}
	return fmt.Errorf("plan set %d: %w", k, err)
}

// rankError names the engine rank when several are installed at once; a
// single rank's error is returned as is (SetPlan's callers match its code).
func rankError(managers []*Manager, i int, err error) error {
	if len(managers) == 1 {
		return err
	}
	return fmt.Errorf("engine rank %d: %w", managers[i].cfg.EngineRank, err)
}

// PlanHash is the hash of the plan set the rank runs ("" before any).
func (m *Manager) PlanHash() string {
	if r := m.routing.Load(); r != nil {
		return r.view.snap.Hash
	}
	return ""
}
