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

package fleet

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// volumeAgents is how many directory sources TestFleetVolumeSource runs:
// each watches its plan and seal directories with an inotify instance of
// its own, and a user has 128 (fs.inotify.max_user_instances) shared with
// everything else on the machine. The figure measured is per agent (one
// pod's kubelet writes one pod's volume), so ten (twenty instances) and
// ten swaps each suffice.
const (
	volumeAgents = 10
	volumeRounds = 10
)

// TestFleetVolumeSource measures what the projected-volume path adds after
// the kubelet: each agent's plan and seal directories are swapped as the
// kubelet's atomic writer does (kubeletsim.WriteAtomic, the seal first),
// and the time from the plans' swap to the agent's load of them is what
// the agent's directory watch and its verified load cost. The kubelet's
// own delay (its sync period) comes before this and is not simulated; see
// docs/benchmarks.md.
func TestFleetVolumeSource(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	gens := []planv1.Layout{
		fixtures.MHA(8, 4, fixtures.Buffers(80, 256, 256, 256)),
		fixtures.MHA(4, 4, fixtures.Buffers(80, 256, 256, 256)),
	}
	type agentDirs struct{ plans, seal string }
	dirs := make([]agentDirs, volumeAgents)
	agents := make([]*agent, volumeAgents)
	publish := func(gen int) (string, map[string][]byte, map[string][]byte) {
		set, err := planv1.Plan(gens[gen%len(gens)])
		if err != nil {
			t.Fatal(err)
		}
		objects, err := planstore.Encode(pairName, set)
		if err != nil {
			t.Fatal(err)
		}
		seal, err := planstore.NewSeal(pairName, "uid", int64(gen+1), objects[0])
		if err != nil {
			t.Fatal(err)
		}
		raw, err := seal.Encode()
		if err != nil {
			t.Fatal(err)
		}
		plans := map[string][]byte{}
		for _, o := range objects {
			for k, v := range o.Data {
				plans[k] = []byte(v)
			}
			for k, v := range o.BinaryData {
				plans[k] = v
			}
		}
		return set.Hash(), plans, map[string][]byte{planstore.SealKey: raw}
	}
	hash, plans, seal := publish(0)
	root := t.TempDir()
	for i := range agents {
		dirs[i] = agentDirs{filepath.Join(root, "plans", strconv.Itoa(i)), filepath.Join(root, "seal", strconv.Itoa(i))}
		must(t, kubeletsim.WriteAtomic(dirs[i].seal, seal))
		must(t, kubeletsim.WriteAtomic(dirs[i].plans, plans))
		agents[i] = follow(ctx, dirSource(dirs[i].plans, dirs[i].seal, i%decodeTP))
	}
	waitAllOn(t, agents, hash, time.Minute)

	var all latencies
	for round := 1; round <= volumeRounds; round++ {
		hash, plans, seal = publish(round)
		swapped := make([]time.Time, len(agents))
		for i := range agents {
			must(t, kubeletsim.WriteAtomic(dirs[i].seal, seal))
			swapped[i] = time.Now()
			must(t, kubeletsim.WriteAtomic(dirs[i].plans, plans))
		}
		at := waitAllOn(t, agents, hash, time.Minute)
		for i := range at {
			all = append(all, at[i].Sub(swapped[i]))
		}
	}
	all.sort()
	t.Logf("%d agents × %d swaps: %s from the kubelet's swap of the plans to the agent's load", volumeAgents, volumeRounds, all)
}

// dirSource is the injected sidecar's source: --plan-dir with
// --plan-seal-dir.
func dirSource(plans, seal string, engineRank int) plansource.Dir {
	return plansource.Dir{Path: plans, SealDir: seal, EngineRanks: []int{engineRank}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
