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

package webhooks

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// rankRange is the decode engine ranks one pod hosts: first .. first+count-1.
type rankRange struct {
	first, count int64
	// origin says where first came from, for messages.
	origin string
}

func (r rankRange) last() int64 { return r.first + r.count - 1 }

func (r rankRange) String() string {
	if r.count == 1 {
		return fmt.Sprintf("rank %d", r.first)
	}
	return fmt.Sprintf("ranks %d..%d", r.first, r.last())
}

// podRanks works out which decode engine ranks a pod hosts, in the order the
// documentation gives: ranks-per-pod defaults to the decode TP (the whole
// instance in one pod); the first rank is worker-index × ranks-per-pod under
// LeaderWorkerSet, else the first-rank annotation, else 0. A range that does
// not fit the decode fleet is refused with the numbers, because an agent for
// ranks the plans do not have would never become ready.
func podRanks(pod *corev1.Pod, pair *pdv1.PDPair) (rankRange, *refusal) {
	tp := int64(pair.Spec.Decode.TensorParallelSize)
	r := rankRange{count: tp, origin: "the default 0"}
	if v, ok := pod.Annotations[pdv1.AnnotationRanksPerPod]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return r, refuse(RefuseInvalidRankSetting, "annotation %s is %q: it must be a positive integer (engine ranks the pod hosts)", pdv1.AnnotationRanksPerPod, v)
		}
		r.count = n
	}
	if v, ok := pod.Labels[pdv1.LabelLWSWorkerIndex]; ok {
		idx, err := strconv.ParseInt(v, 10, 32)
		if err != nil || idx < 0 {
			return r, refuse(RefuseInvalidRankSetting, "label %s is %q: it must be a non-negative integer", pdv1.LabelLWSWorkerIndex, v)
		}
		r.first = idx * r.count
		r.origin = fmt.Sprintf("%s %d × ranks-per-pod %d", pdv1.LabelLWSWorkerIndex, idx, r.count)
	} else if v, ok := pod.Annotations[pdv1.AnnotationFirstRank]; ok {
		first, err := strconv.ParseInt(v, 10, 32)
		if err != nil || first < 0 {
			return r, refuse(RefuseInvalidRankSetting, "annotation %s is %q: it must be a non-negative integer", pdv1.AnnotationFirstRank, v)
		}
		r.first = first
		r.origin = "annotation " + pdv1.AnnotationFirstRank
	}
	if r.count > pdv1.AgentMaxRanksPerPod {
		return r, refuse(RefuseRankRangeOutOfBounds,
			"the pod would host %d decode engine ranks but one agent serves at most %d; set annotation %s (PDPair %s has decode tensorParallelSize %d)",
			r.count, pdv1.AgentMaxRanksPerPod, pdv1.AnnotationRanksPerPod, pair.Name, tp)
	}
	if r.last() >= tp {
		return r, refuse(RefuseRankRangeOutOfBounds,
			"the pod would host decode engine %s (first rank %d from %s, %d ranks per pod) but PDPair %s has decode tensorParallelSize %d (engine ranks 0..%d)",
			r, r.first, r.origin, r.count, pair.Name, tp, tp-1)
	}
	return r, nil
}
