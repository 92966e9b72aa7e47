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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// CacheOptions makes the manager's cache hold only plan ConfigMaps (those
// with the PDPair label) and decode pods (the PDPair label and role decode),
// not every ConfigMap and pod in the cluster. With namespaces, the cache (and so the manager's watches and lists) is
// restricted to them: the namespaced mode, which needs only Roles there.
// What the manager never reads of a cached object is dropped before it is
// cached (stripUnread).
//
// ConfigMaps are watched as metadata only (the controller's Owns is
// builder.OnlyMetadata), trimmed further by trimConfigMapMeta: anyone who
// may create ConfigMaps in a namespace can put the PDPair label on as many
// 1 MiB ConfigMaps as they like, and none of their data may reach the
// manager. The data of the pair's own ConfigMaps is read by name when
// needed (publish.go).
func CacheOptions(namespaces ...string) cache.Options {
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: planConfigMapSelector(), Transform: trimConfigMapMeta},
			&corev1.Pod{}:       {Label: decodePodSelector()},
		},
		DefaultTransform: stripUnread,
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// planConfigMapSelector selects every plan ConfigMap.
func planConfigMapSelector() labels.Selector {
	req, err := labels.NewRequirement(pdv1.LabelPDPair, selection.Exists, nil)
	if err != nil { // a constant, valid key: cannot happen
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}

// lastApplied is the annotation `kubectl apply` keeps the applied object
// in: for a PDPair, its spec again, inline contracts included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// stripUnread drops, before an object is cached, what the manager never
// reads of it: its managed fields (every field path of every writer; for a
// pair the manager writes the status of, about as large as the status)
// and kubectl's last-applied annotation. With thousands of PDPairs and
// their plan ConfigMaps they are a large part of the cache. Writes are
// unaffected: status goes as a merge patch of the fields that changed,
// ConfigMaps as server-side applies of the manager's own configuration.
func stripUnread(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil // not an object (a tombstone): as it is
	}
	if obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[lastApplied]; ok {
			delete(a, lastApplied)
			obj.SetAnnotations(a)
		}
	}
	return in, nil
}

// maxCachedAnnotationBytes bounds an annotation value kept in the cache: the
// operator's own (plan hash, content hash) are 64 hex digits.
const maxCachedAnnotationBytes = 128

// trimConfigMapMeta keeps, of a labelled ConfigMap's metadata, only what the
// manager reads: name, namespace, UID, resourceVersion, the controller
// reference, and the labels and annotations the operator writes (values of
// a bounded length). A namespace user's labelled ConfigMap then costs the
// cache a few hundred bytes however much metadata (up to 256 KiB of
// annotations, any number of owner references and finalizers) it carries.
// Data is not its business: the watch is metadata only, so none arrives.
func trimConfigMapMeta(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil // a tombstone: as it is
	}
	obj.SetManagedFields(nil)
	obj.SetFinalizers(nil)
	obj.SetLabels(keep(obj.GetLabels(), pdv1.LabelPDPair, pdv1.LabelRole, pdv1.LabelManagedBy))
	obj.SetAnnotations(keep(obj.GetAnnotations(), pdv1.AnnotationPlanHash, pdv1.AnnotationContentHash))
	var refs []metav1.OwnerReference
	if ref := metav1.GetControllerOf(obj); ref != nil {
		refs = []metav1.OwnerReference{*ref}
	}
	obj.SetOwnerReferences(refs)
	return in, nil
}

// keep is the entries of m under keys whose values are short enough to be
// the operator's own; nil when there are none.
func keep(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok && len(v) <= maxCachedAnnotationBytes {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}
