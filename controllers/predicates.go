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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// foreignConfigMapChange passes the ConfigMap events that may need a repair
// and drops the echoes of the operator's own writes. The events carry
// metadata only (the cache holds no ConfigMap data, cache.go):
//   - create: dropped; the operator created it (a ConfigMap someone else
//     creates under a plan name is found when the operator next publishes);
//   - update: dropped when its resourceVersion is the one the operator's
//     own write left (verified) or did not change (a resync); passed
//     otherwise (someone else wrote it: data, labels, annotations) and
//     whenever the controller reference changed;
//   - delete: passed; the reconcile recreates what is still wanted.
type foreignConfigMapChange struct {
	predicate.Funcs
	verified *verifiedConfigMaps
}

func (foreignConfigMapChange) Create(event.CreateEvent) bool { return false }

func (foreignConfigMapChange) Generic(event.GenericEvent) bool { return false }

func (foreignConfigMapChange) Delete(event.DeleteEvent) bool { return true }

func (p foreignConfigMapChange) Update(e event.UpdateEvent) bool {
	oldCM, newCM := e.ObjectOld, e.ObjectNew
	if oldCM == nil || newCM == nil || !sameController(oldCM, newCM) {
		return true
	}
	rv := newCM.GetResourceVersion()
	if rv == oldCM.GetResourceVersion() {
		return false
	}
	ref := metav1.GetControllerOf(newCM)
	if ref == nil || p.verified == nil {
		return true
	}
	pair := types.NamespacedName{Namespace: newCM.GetNamespace(), Name: ref.Name}
	return !p.verified.ownEvent(pair, newCM.GetName(), rv)
}

func sameController(a, b metav1.Object) bool {
	ra, rb := metav1.GetControllerOf(a), metav1.GetControllerOf(b)
	if ra == nil || rb == nil {
		return ra == rb
	}
	return ra.UID == rb.UID
}
