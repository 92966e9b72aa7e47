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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// cmMeta is a plan ConfigMap's metadata as the cache holds it, at rv,
// controlled by pair p.
func cmMeta(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "p-plans-index", ResourceVersion: rv,
		OwnerReferences: []metav1.OwnerReference{{UID: "u1", Controller: ptrTo(true), Kind: "PDPair", Name: "p"}},
	}}
}

// The events carry metadata only; the operator's own writes are told
// apart by the resourceVersion they left.
func TestForeignConfigMapChange(t *testing.T) {
	verified := newVerifiedConfigMaps()
	p := foreignConfigMapChange{verified: verified}
	pair := types.NamespacedName{Namespace: "ns", Name: "p"}
	verified.set(pair, "p-plans-index", verifiedAt{uid: "c1", rv: "12", contentHash: "h"})
	old := cmMeta("11")
	ours := cmMeta("12")
	edited := cmMeta("13")
	orphaned := cmMeta("12")
	orphaned.OwnerReferences = nil
	cases := []struct {
		name string
		pass bool
		got  bool
	}{
		{"the operator's own create", false, p.Create(event.CreateEvent{Object: ours})},
		{"the operator's own update", false, p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: ours})},
		{"a resync", false, p.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: ours.DeepCopy()})},
		{"someone edits it", true, p.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: edited})},
		{"someone edits it after a restart", true, foreignConfigMapChange{verified: newVerifiedConfigMaps()}.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: ours})},
		{"someone removes the owner reference", true, p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: orphaned})},
		{"someone deletes it", true, p.Delete(event.DeleteEvent{Object: old})},
	}
	for _, c := range cases {
		if c.got != c.pass {
			t.Errorf("%s: reconcile = %v, want %v", c.name, c.got, c.pass)
		}
	}

	// The event of the manager's write before the write's answer: held
	// back, and the answer at its resourceVersion asks for nothing more;
	// someone else's write in between asks for one more reconcile.
	verified.beginWrite(pair, "p-plans-index")
	if p.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: cmMeta("14")}) {
		t.Error("an update during the manager's write passed")
	}
	if verified.endWrite(pair, "p-plans-index", verifiedAt{uid: "c1", rv: "14", contentHash: "h"}) {
		t.Error("the manager's own write, seen before its answer, counts as raced")
	}
	if p.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: cmMeta("14")}) {
		t.Error("the echo of the manager's write passed after its answer")
	}
	verified.beginWrite(pair, "p-plans-index")
	p.Update(event.UpdateEvent{ObjectOld: ours, ObjectNew: cmMeta("15")})
	if !verified.endWrite(pair, "p-plans-index", verifiedAt{uid: "c1", rv: "16", contentHash: "h"}) {
		t.Error("someone else's write during the manager's is not raced")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: cmMeta("16"), ObjectNew: cmMeta("17")}) {
		t.Error("an edit after the write is dropped")
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
