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

package plansource

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// TestSealFieldsReadsWhatTheWholeStatusSays: converting only the fields
// the seal needs gives the seal a conversion of the whole PDPair gives,
// with and without a published plan, and a status.plan of the wrong type
// is an error, not a seal.
func TestSealFieldsReadsWhatTheWholeStatusSays(t *testing.T) {
	full := &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kv", UID: "u-1", Generation: 9}}
	full.Status.ObservedGeneration = 7
	full.Status.Plan = &pdv1.PlanSummary{Hash: "ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd",
		IndexSHA256: "cd0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"}
	full.Status.Generations = []pdv1.PlanGeneration{{Current: true, Message: "not read"}}
	withdrawn := full.DeepCopy()
	withdrawn.Status.Plan = nil
	for name, pair := range map[string]*pdv1.PDPair{"published": full, "withdrawn": withdrawn} {
		t.Run(name, func(t *testing.T) {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pair)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: obj}
			var whole pdv1.PDPair
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &whole); err != nil {
				t.Fatal(err)
			}
			want, err := sealOfStatus(&whole)
			if err != nil {
				t.Fatal(err)
			}
			part, err := sealFields(u)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sealOfStatus(part)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("seal from the fields %+v, from the whole PDPair %+v", got, want)
			}
		})
	}
	bad := map[string]any{"metadata": map[string]any{"name": "kv"}, "status": map[string]any{"plan": "a string"}}
	if _, err := sealFields(&unstructured.Unstructured{Object: bad}); err == nil {
		t.Error("a status.plan that is a string gave a seal")
	}
}
