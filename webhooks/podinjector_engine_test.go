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
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A decode pod of a vLLM or SGLang pair is admitted as it is, without the
// agent, and the PDPair gets an Event saying so; a dry run gets none.
func TestPodsOfEnginesWithoutTheAgentAreLeftAlone(t *testing.T) {
	for _, name := range []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang} {
		t.Run(string(name), func(t *testing.T) {
			pair := fixtures.GQAPair("ns", "pair", 8, 4, 80, 512)
			pair.Spec.Engine = &pdv1.EngineSpec{Name: name}
			p := newInjector(t)
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(pair).Build()
			rec := events.NewFakeRecorder(4)
			p.Reader, p.Recorder = c, rec
			req := podRequest(t, admissionv1.Create, fixtures.DecodePod("ns", "d", "pair").Obj())
			resp := p.Handle(context.Background(), req)
			if !resp.Allowed || len(resp.Patches) != 0 || !strings.Contains(resp.Result.Message, "engine "+string(name)+" moves the KV cache itself") {
				t.Fatalf("allowed %v, %d patches, %q", resp.Allowed, len(resp.Patches), resp.Result.Message)
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
