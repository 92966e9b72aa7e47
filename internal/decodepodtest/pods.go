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

package decodepodtest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// PodBuilder builds pods that read like the scenario:
//
//	decodepodtest.DecodePod(ns, "d0", "llama").RanksPerPod(2).WorkerIndex(1).Obj()
type PodBuilder struct{ p corev1.Pod }

// Pod is an unlabelled pod with one engine container.
func Pod(namespace, name string) *PodBuilder {
	return &PodBuilder{p: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "engine", Image: "engine:test", Command: []string{"serve"},
		}}},
	}}
}

// DecodePod is a pod labelled as a decode pod of pair.
func DecodePod(namespace, name, pair string) *PodBuilder {
	return Pod(namespace, name).Label(pdv1.LabelPDPair, pair).Label(pdv1.LabelRole, pdv1.RoleDecode)
}

// Obj returns a copy of the pod built so far.
func (b *PodBuilder) Obj() *corev1.Pod { return b.p.DeepCopy() }

// Label sets a label.
func (b *PodBuilder) Label(k, v string) *PodBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}

// Annotate sets an annotation.
func (b *PodBuilder) Annotate(k, v string) *PodBuilder {
	if b.p.Annotations == nil {
		b.p.Annotations = map[string]string{}
	}
	b.p.Annotations[k] = v
	return b
}

// RanksPerPod sets the ranks-per-pod annotation.
func (b *PodBuilder) RanksPerPod(v string) *PodBuilder {
	return b.Annotate(pdv1.AnnotationRanksPerPod, v)
}

// FirstRank sets the first-rank annotation.
func (b *PodBuilder) FirstRank(v string) *PodBuilder { return b.Annotate(pdv1.AnnotationFirstRank, v) }

// WorkerIndex sets LeaderWorkerSet's worker-index label.
func (b *PodBuilder) WorkerIndex(v string) *PodBuilder { return b.Label(pdv1.LabelLWSWorkerIndex, v) }

// Container adds another container.
func (b *PodBuilder) Container(c corev1.Container) *PodBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, c)
	return b
}

// InitContainer adds an init container.
func (b *PodBuilder) InitContainer(c corev1.Container) *PodBuilder {
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, c)
	return b
}

// Volume adds a volume.
func (b *PodBuilder) Volume(v corev1.Volume) *PodBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, v)
	return b
}

// AgentContainer is the pod's injected agent, or nil.
func AgentContainer(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == pdv1.AgentContainerName {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// FindVolume is the pod's volume of that name, or nil.
func FindVolume(pod *corev1.Pod, name string) *corev1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}
