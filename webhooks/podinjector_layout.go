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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// DecodeLayoutOf is the decode layout a pod admitted for pair now runs
// under: the pair's decode tensorParallelSize and dataParallelSize.
func DecodeLayoutOf(pair *pdv1.PDPair) transferplan.Parallelism {
	d := pair.Spec.Decode
	return transferplan.Parallelism{TPSize: int(d.TensorParallelSize), DPSize: int(d.DataParallel())}
}

// admittedUnder is the sidecar for a pod admitted under a decode layout:
// the layout is fixed for the pod's life, whatever the pair says later,
// because the engine beside the agent keeps the TP it was started with
// until the pod is replaced.
func (a AgentSidecar) admittedUnder(layout transferplan.Parallelism) AgentSidecar {
	a.decodeLayout = layout
	return a
}

// admittedLayout is the decode layout the pod is admitted under: the one
// its template pins (annotation pd.pdtopo.dev/decode-layout), when the
// pair still serves it, else the pair's spec's. A pinned template keeps a
// pod of the old template, created mid-rollout (a replaced pod of the old
// ReplicaSet), under the layout its engine runs.
func admittedLayout(pod *corev1.Pod, pair *pdv1.PDPair) (transferplan.Parallelism, *refusal) {
	spec := DecodeLayoutOf(pair)
	text, pinned := pod.Annotations[pdv1.AnnotationDecodeLayout]
	if !pinned {
		return spec, nil
	}
	p, err := transferplan.ParseParallelism(text)
	if err != nil {
		return spec, refuse(RefuseDecodeLayoutNotServed, "annotation %s: %v", pdv1.AnnotationDecodeLayout, err)
	}
	served := []string{spec.String()}
	if p == spec {
		return p, nil
	}
	for _, g := range pair.Status.Generations {
		d := transferplan.Parallelism{TPSize: int(g.Decode.TensorParallelSize), DPSize: int(g.Decode.DataParallel())}
		if d == p {
			return p, nil
		}
		if !slices.Contains(served, d.String()) {
			served = append(served, d.String())
		}
	}
	return spec, refuse(RefuseDecodeLayoutNotServed,
		"the pod pins decode layout %s (annotation %s) but PDPair %s serves decode layouts %s: no plans exist for it; remove the annotation or set it to a served layout",
		p, pdv1.AnnotationDecodeLayout, pair.Name, strings.Join(served, ", "))
}

// withDecodeLayout is pair with its decode TP and DP replaced by layout's,
// for the rank checks of a pod admitted under an older layout.
func withDecodeLayout(pair *pdv1.PDPair, layout transferplan.Parallelism) *pdv1.PDPair {
	if layout == DecodeLayoutOf(pair) {
		return pair
	}
	out := pair.DeepCopy()
	dp := int32(layout.DPSize)
	out.Spec.Decode.TensorParallelSize, out.Spec.Decode.DataParallelSize = int32(layout.TPSize), &dp
	return out
}

// recordDecodeLayout writes the admitted layout on the pod (for the
// operator, which counts pods per layout, and for a person reading the
// pod) and on the agent's command line (for the agent, which picks its
// plans by it). Both carry the same text.
func recordDecodeLayout(pod *corev1.Pod, sidecar *corev1.Container, layout transferplan.Parallelism) {
	if layout.TPSize == 0 {
		return
	}
	pod.Annotations[pdv1.AnnotationDecodeLayout] = layout.String()
	sidecar.Args = append(sidecar.Args, "--decode-layout="+layout.String())
}

// keptGenerationVerdict lets a pod through a refusal of the pair's spec
// when its template pins the decode layout of a generation the pair keeps
// serving: an edit the engine refuses mid-rollout must not stop the old
// template's pods (a replaced pod, a restarted group), whose plans are
// still published.
func keptGenerationVerdict(pod *corev1.Pod, pair *pdv1.PDPair, verdict *refusal) *refusal {
	if verdict == nil || verdict.reason != RefusePDPairIncompatible {
		return verdict
	}
	p, err := transferplan.ParseParallelism(pod.Annotations[pdv1.AnnotationDecodeLayout])
	if err != nil {
		return verdict
	}
	for _, g := range pair.Status.Generations {
		if !g.Current && g.PlanHash != "" && p == (transferplan.Parallelism{TPSize: int(g.Decode.TensorParallelSize), DPSize: int(g.Decode.DataParallel())}) {
			return nil
		}
	}
	return verdict
}
