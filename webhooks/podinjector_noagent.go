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
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

// admitWithoutAgent admits a decode pod of an engine that moves the KV
// cache itself (vllm, sglang): nothing is injected, but the decode layout
// and engine version it is admitted under are recorded, so that the
// operator counts it for its generation mid-rollout (no agent reports it
// there). The PDPair gets an Event saying so; a dry run gets none.
func (p *PodInjector) admitWithoutAgent(req admission.Request, pod *corev1.Pod, pair *pdv1.PDPair, eng engine.Engine) admission.Response {
	msg := fmt.Sprintf("decode pod %s admitted without pdtopo's receiver agent: engine %s moves the KV cache itself", podName(pod), eng.Name())
	if p.Recorder != nil && (req.DryRun == nil || !*req.DryRun) {
		p.Recorder.Eventf(pair, nil, corev1.EventTypeNormal, "AgentNotInjected", "Admit", "%s", msg)
	}
	_, pinned := pod.Annotations[pdv1.AnnotationDecodeLayout]
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	if !pinned {
		pod.Annotations[pdv1.AnnotationDecodeLayout] = DecodeLayoutOf(pair).String()
	}
	recordEngineVersion(pod, pair, pinned)
	mutated, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, mutated)
	resp.Result = &metav1.Status{Code: http.StatusOK, Message: msg}
	return resp
}

// recordEngineVersion writes the pair's decode engineVersion on a pod
// admitted under the spec's decode layout. A template that pins its layout
// (pinned) is of the generation it names, whose version the spec no
// longer says: it pins its version too, or counts without one; a version
// the template gives is kept.
func recordEngineVersion(pod *corev1.Pod, pair *pdv1.PDPair, pinned bool) {
	v := pair.Spec.Decode.EngineVersion
	if v == "" || pinned {
		return
	}
	if _, given := pod.Annotations[pdv1.AnnotationEngineVersion]; given {
		return
	}
	pod.Annotations[pdv1.AnnotationEngineVersion] = v
}
