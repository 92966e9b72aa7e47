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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// desiredConfigMaps turns the encoded plan objects into ConfigMaps controlled
// by the PDPair, index first.
func (r *PDPairReconciler) desiredConfigMaps(pair *pdv1.PDPair, out *planOutcome, objects []planstore.Object) ([]*corev1.ConfigMap, error) {
	cms := make([]*corev1.ConfigMap, 0, len(objects))
	for i, obj := range objects {
		role := pdv1.RolePlanShard
		if i == 0 {
			role = pdv1.RolePlanIndex
			var err error
			if obj, err = r.signedIndex(pair, obj); err != nil {
				return nil, err
			}
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:      obj.Name,
				Namespace: pair.Namespace,
				Labels:    map[string]string{pdv1.LabelPDPair: pair.Name, pdv1.LabelRole: role, pdv1.LabelManagedBy: pdv1.ManagerName},
				Annotations: map[string]string{
					pdv1.AnnotationPlanHash:    out.hash,
					pdv1.AnnotationContentHash: contentHash(obj.Data, obj.BinaryData),
				},
			},
			Data:       obj.Data,
			BinaryData: obj.BinaryData,
		}
		if err := controllerutil.SetControllerReference(pair, cm, r.Scheme); err != nil {
			return nil, err
		}
		cms = append(cms, cm)
	}
	return cms, nil
}

// upToDate reports whether have already carries everything want says.
// Extra labels and annotations others added are left alone.
func upToDate(have, want *corev1.ConfigMap) bool {
	return metaUpToDate(have, want) && sameStrings(have.Data, want.Data) && sameBytes(have.BinaryData, want.BinaryData)
}

// metaUpToDate is upToDate of the metadata alone (the cache holds no data).
func metaUpToDate(have metav1.Object, want *corev1.ConfigMap) bool {
	return sameOwners(have.GetOwnerReferences(), want.OwnerReferences) &&
		contains(have.GetLabels(), want.Labels) && contains(have.GetAnnotations(), want.Annotations)
}

func sameOwners(have, want []metav1.OwnerReference) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range have {
		if have[i].UID != want[i].UID || have[i].Kind != want[i].Kind || have[i].Name != want[i].Name ||
			have[i].APIVersion != want[i].APIVersion || !boolEq(have[i].Controller, want[i].Controller) ||
			!boolEq(have[i].BlockOwnerDeletion, want[i].BlockOwnerDeletion) {
			return false
		}
	}
	return true
}

func boolEq(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func sameStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sameBytes(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// contentHash is the hex SHA-256 of a ConfigMap's data in key order, with
// string and binary values kept apart.
func contentHash(data map[string]string, binaryData map[string][]byte) string {
	h := sha256.New()
	for _, k := range sortedKeys(data) {
		h.Write([]byte("d\x00" + k + "\x00"))
		h.Write([]byte(data[k]))
		h.Write([]byte{0})
	}
	for _, k := range sortedKeys(binaryData) {
		h.Write([]byte("b\x00" + k + "\x00"))
		h.Write(binaryData[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dataBytes is the size of a ConfigMap's data and binary data.
func dataBytes(cm *corev1.ConfigMap) int64 {
	var n int64
	for k, v := range cm.Data {
		n += int64(len(k) + len(v))
	}
	for k, v := range cm.BinaryData {
		n += int64(len(k) + len(v))
	}
	return n
}

// planObject is a ConfigMap as the planstore loaders read it.
func planObject(cm *corev1.ConfigMap) planstore.Object {
	return planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData}
}

// configMapApply is want as a server-side apply configuration: every field
// the manager owns, and nothing else.
func configMapApply(want *corev1.ConfigMap) *corev1ac.ConfigMapApplyConfiguration {
	ac := corev1ac.ConfigMap(want.Name, want.Namespace).
		WithLabels(want.Labels).
		WithAnnotations(want.Annotations).
		WithData(want.Data).
		WithBinaryData(want.BinaryData)
	for _, ref := range want.OwnerReferences {
		o := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
		if ref.Controller != nil {
			o.WithController(*ref.Controller)
		}
		if ref.BlockOwnerDeletion != nil {
			o.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
		}
		ac.WithOwnerReferences(o)
	}
	return ac
}
