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
	"cmp"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MaxPrefillLayoutsMet bounds the prefill layouts one rank reports: a
// rollout has two, and a pair never serves more than a few generations.
const MaxPrefillLayoutsMet = 8

// PrefillLayoutMet is one prefill layout among the bootstrap addresses this
// rank holds: how many addresses (prefill instances) answered with it.
type PrefillLayoutMet struct {
	Layout    transferplan.Parallelism
	Instances int
}

// PrefillLayoutsMet are the layouts of the prefill instances this rank
// currently holds (their parallel info fetched and accepted; the heartbeat
// drops the addresses that go away), most instances first, at most
// MaxPrefillLayoutsMet. The operator counts them to know which prefill
// layouts are still in use mid-rollout.
func (m *Manager) PrefillLayoutsMet() []PrefillLayoutMet {
	r := m.routing.Load()
	if r == nil {
		return nil
	}
	counts := map[transferplan.Parallelism]int{}
	t := r.peers
	t.mu.Lock()
	for _, pa := range t.addrs {
		if pa.info != nil {
			counts[transferplan.Parallelism{TPSize: pa.info.TPSize, DPSize: pa.info.DPSize}]++
		}
	}
	t.mu.Unlock()
	out := make([]PrefillLayoutMet, 0, len(counts))
	for p, n := range counts {
		out = append(out, PrefillLayoutMet{Layout: p, Instances: n})
	}
	slices.SortFunc(out, func(a, b PrefillLayoutMet) int {
		return cmp.Or(cmp.Compare(b.Instances, a.Instances), cmp.Compare(a.Layout.TPSize, b.Layout.TPSize), cmp.Compare(a.Layout.DPSize, b.Layout.DPSize))
	})
	return out[:min(len(out), MaxPrefillLayoutsMet)]
}
