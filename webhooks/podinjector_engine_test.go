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
	"maps"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A decode pod of a vLLM or SGLang pair gets nothing injected, only the
// decode layout and engine version it is admitted under (so the operator
// counts it for its generation: no agent reports it), and the PDPair gets
// an Event saying so; a dry run gets none.
func TestPodsOfEnginesWithoutTheAgentGetTheirLayoutOnly(t *testing.T) {
	for _, name := range []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang} {
		t.Run(string(name), func(t *testing.T) {
			pair := fixtures.GQAPair("ns", "pair", 8, 4, 80, 512)
			pair.Spec.Engine = &pdv1.EngineSpec{Name: name}
			pair.Spec.Prefill.EngineVersion, pair.Spec.Decode.EngineVersion = "0.11.0", "0.11.0"
			p := newInjector(t)
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(pair).Build()
			rec := events.NewFakeRecorder(4)
			p.Reader, p.Recorder = c, rec
			sent := fixtures.DecodePod("ns", "d", "pair").Obj()
			req := podRequest(t, admissionv1.Create, sent)
			resp := p.Handle(context.Background(), req)
			if !resp.Allowed || !strings.Contains(resp.Result.Message, "engine "+string(name)+" moves the KV cache itself") {
				t.Fatalf("allowed %v, %q", resp.Allowed, resp.Result.Message)
			}
			want := map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1", pdv1.AnnotationEngineVersion: "0.11.0"}
			if got := annotationsAfter(t, sent, resp); !maps.Equal(got, want) {
				t.Errorf("annotations %v, want %v", got, want)
			}
			select {
			case e := <-rec.Events:
				if !strings.Contains(e, "AgentNotInjected") || !strings.Contains(e, "without pdtopo's receiver agent") {
					t.Errorf("event %q", e)
				}
			default:
				t.Fatal("no event")
			}
			req.DryRun = ptr.To(true)
			if resp := p.Handle(context.Background(), req); !resp.Allowed || len(rec.Events) != 0 {
				t.Errorf("dry run: allowed %v, %d events", resp.Allowed, len(rec.Events))
			}
		})
	}
}

// What a pod's template pins is kept: a pod of the old template, created
// mid-rollout, pins the layout (and version) its engine runs; a pair
// without versions records none.
func TestPodsOfEnginesWithoutTheAgentKeepWhatTheyPin(t *testing.T) {
	for _, c := range []struct {
		name         string
		version      string
		pinned, want map[string]string
	}{
		{"pinned layout and version", "0.11.0",
			map[string]string{pdv1.AnnotationDecodeLayout: "tp=8,dp=1", pdv1.AnnotationEngineVersion: "0.10.2"},
			map[string]string{pdv1.AnnotationDecodeLayout: "tp=8,dp=1", pdv1.AnnotationEngineVersion: "0.10.2"}},
		{"pinned layout only: no version is added", "0.11.0",
			map[string]string{pdv1.AnnotationDecodeLayout: "tp=8,dp=1"},
			map[string]string{pdv1.AnnotationDecodeLayout: "tp=8,dp=1"}},
		{"pinned version only: the layout is the spec's", "0.11.0",
			map[string]string{pdv1.AnnotationEngineVersion: "0.10.2"},
			map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1", pdv1.AnnotationEngineVersion: "0.10.2"}},
		{"a pair without versions", "", nil, map[string]string{pdv1.AnnotationDecodeLayout: "tp=4,dp=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pair := fixtures.GQAPair("ns", "pair", 8, 4, 80, 512)
			pair.Spec.Engine = &pdv1.EngineSpec{Name: pdv1.EngineVLLM}
			pair.Spec.Prefill.EngineVersion, pair.Spec.Decode.EngineVersion = c.version, c.version
			p := newInjector(t)
			p.Reader = fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(pair).Build()
			sent := fixtures.DecodePod("ns", "d", "pair").Obj()
			sent.Annotations = maps.Clone(c.pinned)
			resp := p.Handle(context.Background(), podRequest(t, admissionv1.Create, sent))
			if !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
			}
			if got := annotationsAfter(t, sent, resp); !maps.Equal(got, c.want) {
				t.Errorf("annotations %v, want %v", got, c.want)
			}
		})
	}
}

// annotationsAfter is the pod's annotations after the webhook's patches,
// which may only add annotations: any other operation fails the test.
func annotationsAfter(t *testing.T, pod *corev1.Pod, resp admission.Response) map[string]string {
	t.Helper()
	out := maps.Clone(pod.Annotations)
	for _, op := range resp.Patches {
		key, isOne := strings.CutPrefix(op.Path, "/metadata/annotations/")
		switch {
		case op.Operation == "add" && op.Path == "/metadata/annotations":
			out = map[string]string{}
			for k, v := range op.Value.(map[string]any) {
				out[k] = v.(string)
			}
		case op.Operation == "add" && isOne:
			out[strings.NewReplacer("~1", "/", "~0", "~").Replace(key)] = op.Value.(string)
		default:
			t.Fatalf("patch %s %s: the webhook may only add annotations", op.Operation, op.Path)
		}
	}
	return out
}

func testScheme(t *testing.T) *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := pdv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}
