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

// admittedUnder is the sidecar for a pod admitted under pair's decode
// layout now: the layout is fixed for the pod's life, whatever the pair
// says later, because the engine beside the agent keeps the TP it was
// started with until the pod is replaced.
func (a AgentSidecar) admittedUnder(pair *pdv1.PDPair) AgentSidecar {
	a.decodeLayout = DecodeLayoutOf(pair)
	return a
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
