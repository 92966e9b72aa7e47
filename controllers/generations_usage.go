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

// layoutUsage is what one reconcile saw using each layout: decode pods by
// the layout they were admitted under (their annotation), agents by the
// layout they report, prefill instances by the layouts the agents hold.
type layoutUsage struct {
	decodePods map[transferplan.Parallelism]int32
	agents     map[transferplan.Parallelism]int32
	prefill    map[transferplan.Parallelism]int32
}

func newLayoutUsage() layoutUsage {
	return layoutUsage{
		decodePods: map[transferplan.Parallelism]int32{},
		agents:     map[transferplan.Parallelism]int32{},
		prefill:    map[transferplan.Parallelism]int32{},
	}
}

// maxPrefillLayoutsPerAgent bounds what one agent's report may add (the
// agent itself reports at most 8): an agent is not trusted to keep the
// manager's maps small.
const maxPrefillLayoutsPerAgent = 8

// addPod counts one decode pod and, when its agent answered, what the
// agent reports. Texts that do not parse are not counted: a pod admitted
// before the webhook recorded layouts has no annotation.
func (u layoutUsage) addPod(pod *corev1.Pod, probe probeResult, probed bool) {
	if p, err := transferplan.ParseParallelism(pod.Annotations[pdv1.AnnotationDecodeLayout]); err == nil {
		u.decodePods[p]++
	}
	if !probed || probe.err != nil {
		return
	}
	if p, err := transferplan.ParseParallelism(probe.info.DecodeLayout); err == nil {
		u.agents[p]++
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

// parallelismOf is a role's layout as usage is counted by.
func parallelismOf(f pdv1.FleetLayout) transferplan.Parallelism {
	return transferplan.Parallelism{TPSize: int(f.TensorParallelSize), DPSize: int(f.DataParallel())}
}
