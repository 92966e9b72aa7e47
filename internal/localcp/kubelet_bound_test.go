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

package localcp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// TestKubeletRefusesPodsOverTheBound: with MaxKubeletPods running, one
// more admitted pod is not run and the table says why; once a slot frees,
// the next pod takes that slot's address.
func TestKubeletRefusesPodsOverTheBound(t *testing.T) {
	var progress bytes.Buffer
	k := &Kubelet{o: Options{PodIP: "127.0.0.1", Progress: &progress}, dir: t.TempDir(), firstIP: 2,
		pods: map[types.UID]*kubePod{}, refused: map[types.UID]string{}}
	for i := range MaxKubeletPods {
		k.pods[types.UID(fmt.Sprint(i))] = newKubePod(testPod(fmt.Sprint(i)), i, "")
	}
	extra := testPod("extra")
	k.admit(extra, &corev1.Container{Name: pdv1.AgentContainerName})
	if k.pods[extra.UID] != nil {
		t.Fatal("a pod over the bound got its agent run")
	}
	want := fmt.Sprintf("pod default/pod-extra: its agent is not run: run-local runs at most %d decode pods' agents", MaxKubeletPods)
	if !strings.Contains(k.refused[extra.UID], want) || !strings.Contains(progress.String(), want) || !strings.Contains(k.Lines(), want) {
		t.Errorf("refusal %q, progress %q; want both to say %q", k.refused[extra.UID], progress.String(), want)
	}
	delete(k.pods, "5")
	if got := k.freeSlot(); got != 5 {
		t.Errorf("free slot %d, want 5", got)
	}
	if ip, err := nthAddress(k.o.PodIP, k.firstIP+k.freeSlot()); err != nil || ip != "127.0.0.8" {
		t.Errorf("slot 5's address %q (%v), want 127.0.0.8 (after the 2 sample pods)", ip, err)
	}
}

func TestDecodeTP(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		want       int32
		err        string
	}{
		{"tp=4,dp=1", 4, ""},
		{"tp=16,dp=8", 16, ""},
		{"", 0, pdv1.AnnotationDecodeLayout},
		{"tp=four", 0, pdv1.AnnotationDecodeLayout},
	} {
		pod := testPod("x")
		pod.Annotations[pdv1.AnnotationDecodeLayout] = tc.annotation
		got, err := decodeTP(pod)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("decodeTP(%q) = %d, %v; want an error naming %s", tc.annotation, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("decodeTP(%q) = %d, %v; want %d", tc.annotation, got, err, tc.want)
		}
	}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pod-" + name, UID: types.UID(name),
		Annotations: map[string]string{pdv1.AnnotationInjected: "first=0,count=4"}}}
}
