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
	corev1 "k8s.io/api/core/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// usageKey is what tells decode generations apart in what the fleet
// shows: the decode TP and DP the pod was admitted under and its engine
// version ("" where none was given: a pair without engineVersion, or a pod
// admitted before the webhook recorded versions, whose annotation
// "tp=4,dp=1" alone still counts for the generation without a version).
// Generations whose decode layouts differ in nothing of it (a block size,
// a dtype) cannot be told apart by their pods (generationUses).
type usageKey struct {
	layout  transferplan.Parallelism
	version string
}

// decodeKey is a decode layout's usageKey (and a prefill layout's, for
// messages).
func decodeKey(f pdv1.FleetLayout) usageKey {
	return usageKey{layout: parallelismOf(f), version: f.EngineVersion}
}

// layoutUsage is what one reconcile saw using each layout: decode pods by
// the layout and version they were admitted under (their annotations),
// agents by the layout they report and their pod's version, prefill
// instances by the layouts the agents hold (TP and DP: the bootstrap
// server's answer carries no version).
type layoutUsage struct {
	decodePods map[usageKey]int32
	agents     map[usageKey]int32
	prefill    map[transferplan.Parallelism]int32
}

func newLayoutUsage() layoutUsage {
	return layoutUsage{
		decodePods: map[usageKey]int32{},
		agents:     map[usageKey]int32{},
		prefill:    map[transferplan.Parallelism]int32{},
	}
}

// maxPrefillLayoutsPerAgent bounds what one agent's report may add (the
// agent itself reports at most 8): an agent is not trusted to keep the
// manager's maps small.
const maxPrefillLayoutsPerAgent = 8

// addPod counts one decode pod and, when its agent answered, what the
// agent reports. Texts that do not parse are not counted: a pod admitted
// before the webhook recorded layouts has no annotation, and a version
// the API would not take is not one a generation has.
func (u layoutUsage) addPod(pod *corev1.Pod, probe probeResult, probed bool) {
	version := pod.Annotations[pdv1.AnnotationEngineVersion]
	if version != "" && !pdv1.ValidEngineVersion(version) {
		return
	}
	if p, err := transferplan.ParseParallelism(pod.Annotations[pdv1.AnnotationDecodeLayout]); err == nil {
		u.decodePods[usageKey{p, version}]++
	}
	if !probed || probe.err != nil {
		return
	}
	if p, err := transferplan.ParseParallelism(probe.info.DecodeLayout); err == nil {
		u.agents[usageKey{p, version}]++
	}
	for i, met := range probe.info.PrefillLayoutsMet {
		if i == maxPrefillLayoutsPerAgent {
			break
		}
		p, err := transferplan.ParseParallelism(met.Layout)
		if err != nil || met.Instances < 1 {
			continue
		}
		u.prefill[p] = max(u.prefill[p], int32(min(met.Instances, 1<<20)))
	}
}

// parallelismOf is a role's TP and DP.
func parallelismOf(f pdv1.FleetLayout) transferplan.Parallelism {
	return transferplan.Parallelism{TPSize: int(f.TensorParallelSize), DPSize: int(f.DataParallel())}
}
