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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// stamped is a ConfigMap as the operator writes it: content hash included.
func stamped(data map[string]string, owner types.UID) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{Data: data, ObjectMeta: metav1.ObjectMeta{
		Annotations:     map[string]string{pdv1.AnnotationContentHash: contentHash(data, nil)},
		OwnerReferences: []metav1.OwnerReference{{UID: owner, Controller: ptrTo(true), Kind: "PDPair", Name: "p"}},
	}}
	return cm
}

func TestForeignConfigMapChange(t *testing.T) {
	p := foreignConfigMapChange{}
	old := stamped(map[string]string{"index.json": "{}"}, "u1")
	ours := stamped(map[string]string{"index.json": `{"v":2}`}, "u1")
	edited := old.DeepCopy()
	edited.Data["index.json"] = "{broken"
	orphaned := old.DeepCopy()
	orphaned.OwnerReferences = nil
	cases := []struct {
		name string
		pass bool
		got  bool
	}{
		{"the operator's own create", false, p.Create(event.CreateEvent{Object: ours})},
		{"the operator's own update", false, p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: ours})},
		{"someone edits the data", true, p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: edited})},
		{"someone removes the owner reference", true, p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: orphaned})},
		{"someone deletes it", true, p.Delete(event.DeleteEvent{Object: old})},
	}
	for _, c := range cases {
		if c.got != c.pass {
			t.Errorf("%s: reconcile = %v, want %v", c.name, c.got, c.pass)
		}
	}
}

func TestContentHashSeparatesStringAndBinaryData(t *testing.T) {
	a := contentHash(map[string]string{"k": "v"}, nil)
	b := contentHash(nil, map[string][]byte{"k": []byte("v")})
	c := contentHash(map[string]string{"k": "v2"}, nil)
	if a == b || a == c || a != contentHash(map[string]string{"k": "v"}, map[string][]byte{}) {
		t.Fatal("content hashes do not tell data apart")
	}
}
