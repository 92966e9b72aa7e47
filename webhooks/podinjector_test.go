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
	"context"
	"encoding/json"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/pdtopo/pdtopo/test/fixtures"
)

func podRequest(t testing.TB, op admissionv1.Operation, pod *corev1.Pod) admission.Request {
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, Namespace: pod.Namespace, Object: runtime.RawExtension{Raw: raw},
	}}
}

func newInjector(t testing.TB) *PodInjector {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// No Reader: a handler that tried to read a PDPair here would panic.
	return &PodInjector{Decoder: admission.NewDecoder(scheme), Agent: AgentSidecar{Image: "agent:test"}}
}

// A pod already carrying the agent, and anything but a creation, is
// admitted unchanged without even reading the pair.
func TestHandleLeavesInjectedPodsAndUpdatesAlone(t *testing.T) {
	p := newInjector(t)
	injected := fixtures.DecodePod("ns", "d", "pair").WithAgent(9440).Obj()
	for name, req := range map[string]admission.Request{
		"already injected": podRequest(t, admissionv1.Create, injected),
		"update":           podRequest(t, admissionv1.Update, fixtures.DecodePod("ns", "d", "pair").Obj()),
	} {
		resp := p.Handle(context.Background(), req)
		if !resp.Allowed || len(resp.Patches) != 0 {
			t.Errorf("%s: allowed %v with %d patches, want allowed unchanged", name, resp.Allowed, len(resp.Patches))
		}
	}
}

// BenchmarkInject is the webhook's own work for one decode pod: decide the
// ranks, add the agent, and compute the JSON patch (the PDPair read is a
// cache hit in the manager).
func BenchmarkInject(b *testing.B) {
	pair := fixtures.GQAPair("ns", "llama", 8, 4, 80, 512)
	pod := fixtures.DecodePod("ns", "decode-0", "llama").
		Container(corev1.Container{Name: "router", Image: "router:test"}).Obj()
	raw, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p := pod.DeepCopy()
		ranks, r := podRanks(p, pair)
		if r == nil {
			r = injectAgent(p, pair.Name, ranks, AgentSidecar{Image: "agent:test"})
		}
		if r != nil {
			b.Fatal(r)
		}
		mutated, _ := json.Marshal(p)
		if resp := admission.PatchResponseFromRaw(raw, mutated); len(resp.Patches) == 0 {
			b.Fatal("no patch")
		}
	}
}

// The agent's pull policy, resources and pull secrets are the manager's
// settings, and the webhook's defaults without them; pull secrets the pod
// lists already are not listed twice, and the pod's own come first.
func TestInjectedAgentSettings(t *testing.T) {
	pair := fixtures.GQAPair("ns", "llama", 8, 4, 4, 512)
	inject := func(agent AgentSidecar, secrets ...string) (*corev1.Pod, corev1.Container) {
		t.Helper()
		pod := fixtures.DecodePod("ns", "d", "llama").Obj()
		for _, s := range secrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
		}
		ranks, r := podRanks(pod, pair)
		if r == nil {
			r = injectAgent(pod, pair.Name, ranks, agent)
		}
		if r != nil {
			t.Fatal(r)
		}
		return pod, pod.Spec.InitContainers[0]
	}
	pod, c := inject(AgentSidecar{Image: "agent:test"}, "engine-pull")
	if c.ImagePullPolicy != corev1.PullIfNotPresent || !equality.Semantic.DeepEqual(c.Resources, DefaultAgentResources()) ||
		!slices.Equal(pullSecretNames(pod), []string{"engine-pull"}) {
		t.Errorf("defaults: policy %s, resources %v, pull secrets %v", c.ImagePullPolicy, c.Resources, pullSecretNames(pod))
	}
	custom := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	pod, c = inject(AgentSidecar{Image: "agent:test", ImagePullPolicy: corev1.PullAlways, Resources: &custom,
		ImagePullSecrets: []string{"agent-pull", "shared-pull"}}, "engine-pull", "shared-pull")
	if c.ImagePullPolicy != corev1.PullAlways || !equality.Semantic.DeepEqual(c.Resources, custom) {
		t.Errorf("settings: policy %s, resources %v, want Always and %v", c.ImagePullPolicy, c.Resources, custom)
	}
	if got, want := pullSecretNames(pod), []string{"engine-pull", "shared-pull", "agent-pull"}; !slices.Equal(got, want) {
		t.Errorf("pull secrets %v, want %v", got, want)
	}
}

func pullSecretNames(pod *corev1.Pod) []string {
	var out []string
	for _, r := range pod.Spec.ImagePullSecrets {
		out = append(out, r.Name)
	}
	return out
}
