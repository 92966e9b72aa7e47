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
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// The keys of a CURVE Secret: what the agent's --curve-keys directory holds
// (cmd/receiver-agent/curve.go reads the same two names).
const (
	curveAgentKey   = "agent.key"
	curvePrefillPub = "prefill.pub"
)

// curveSecret is the Secret a pod's AnnotationCurveSecret names ("" when the
// pod does not ask for CURVE), or a refusal when the name cannot be one.
func curveSecret(pod *corev1.Pod) (string, *refusal) {
	name, ok := pod.Annotations[pdv1.AnnotationCurveSecret]
	if !ok {
		return "", nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", refuse(RefuseInvalidCurveSecret, "annotation %s=%q is not a Secret name: %s",
			pdv1.AnnotationCurveSecret, name, errs[0])
	}
	return name, nil
}

// pairCurveVerdict refuses a decode pod without AnnotationCurveSecret when
// its pair carries AnnotationRequireCurve "true" (or a value that is not a
// boolean: a typo must not turn the requirement off).
func pairCurveVerdict(pod *corev1.Pod, pair *pdv1.PDPair) *refusal {
	v, ok := pair.Annotations[pdv1.AnnotationRequireCurve]
	if !ok || v == "false" {
		return nil
	}
	if v != "true" {
		return refuse(RefuseCurveRequired, "PDPair %s has annotation %s=%q, which is neither \"true\" nor \"false\"; its decode pods are refused until it is one of them",
			pair.Name, pdv1.AnnotationRequireCurve, v)
	}
	if _, asks := pod.Annotations[pdv1.AnnotationCurveSecret]; asks {
		return nil
	}
	return refuse(RefuseCurveRequired, "PDPair %s requires ZMQ CURVE (annotation %s=\"true\"); the decode pod needs annotation %s naming the Secret with the CURVE keys",
		pair.Name, pdv1.AnnotationRequireCurve, pdv1.AnnotationCurveSecret)
}

// addCurve mounts the CURVE Secret into the agent alone and turns CURVE on.
// The volume is not optional: a pod that asks for encryption waits for its
// keys (the kubelet reports the missing Secret in the pod's events) rather
// than start an agent that would speak in the clear.
func addCurve(pod *corev1.Pod, agent *corev1.Container, secret string) {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: pdv1.AgentCurveVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{
			SecretName: secret,
			Items: []corev1.KeyToPath{
				{Key: curveAgentKey, Path: curveAgentKey},
				{Key: curvePrefillPub, Path: curvePrefillPub},
			},
			DefaultMode: ptr.To[int32](0o444), // the agent runs as AgentUID, not the files' owner
		},
	}})
	agent.VolumeMounts = append(agent.VolumeMounts, corev1.VolumeMount{
		Name: pdv1.AgentCurveVolume, MountPath: pdv1.AgentCurveDir, ReadOnly: true,
	})
	agent.Args = append(agent.Args, "--curve-keys="+pdv1.AgentCurveDir)
}
