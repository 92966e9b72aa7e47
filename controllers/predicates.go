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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// foreignConfigMapChange passes the ConfigMap events that may need a repair
// and drops the echoes of the operator's own writes:
//   - create: dropped; the operator created it (a ConfigMap someone else
//     creates under a plan name is found when the operator next publishes);
//   - update: passed only if the data no longer matches the content hash the
//     operator stamped, or the controller reference changed;
//   - delete: passed; the reconcile recreates what is still wanted.
type foreignConfigMapChange struct{ predicate.Funcs }

func (foreignConfigMapChange) Create(event.CreateEvent) bool { return false }

func (foreignConfigMapChange) Generic(event.GenericEvent) bool { return false }

func (foreignConfigMapChange) Delete(event.DeleteEvent) bool { return true }

func (foreignConfigMapChange) Update(e event.UpdateEvent) bool {
	oldCM, okOld := e.ObjectOld.(*corev1.ConfigMap)
	newCM, okNew := e.ObjectNew.(*corev1.ConfigMap)
	if !okOld || !okNew {
		return true
	}
	if !sameController(oldCM, newCM) {
		return true
	}
	return newCM.Annotations[pdv1.AnnotationContentHash] != contentHash(newCM.Data, newCM.BinaryData)
}

func sameController(a, b metav1.Object) bool {
	ra, rb := metav1.GetControllerOf(a), metav1.GetControllerOf(b)
	if ra == nil || rb == nil {
		return ra == rb
	}
	return ra.UID == rb.UID
}
