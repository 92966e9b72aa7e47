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

package webhooks_test

import (
	"context"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// Through the real API server: a decode pod of a vLLM pair is stored with
// its decode layout and engine version and nothing else added; a
// tokenspeed pod with the agent gets the version beside its layout.
func TestAdmittedPodsRecordTheEngineVersion(t *testing.T) {
	ns := newNamespace(t)
	vllm := fixtures.Pair(ns, "vllm").Prefill(4, 1).Decode(2, 1).
		InlineModel(`{"architectures":["LlamaForCausalLM"],"num_hidden_layers":4,"num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"head_dim":128}`, "bfloat16").
		Edit(func(p *pdv1.PDPair) {
			p.Spec.Engine = &pdv1.EngineSpec{Name: pdv1.EngineVLLM}
			p.Spec.Prefill.TokensPerPage, p.Spec.Decode.TokensPerPage = ptr.To[int32](16), ptr.To[int32](16)
			p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.11.0", "0.11.0"
		}).Obj()
	if err := k8s.Create(context.Background(), vllm); err != nil {
		t.Fatal(err)
	}
	sent := fixtures.DecodePod(ns, "vllm-decode-0", "vllm").Obj()
	pod := admit(t, sent)
	want := map[string]string{pdv1.AnnotationDecodeLayout: "tp=2,dp=1", pdv1.AnnotationEngineVersion: "0.11.0"}
	if !maps.Equal(pod.Annotations, want) {
		t.Errorf("vLLM decode pod annotations %v, want %v", pod.Annotations, want)
	}
	if len(pod.Spec.InitContainers) != len(sent.Spec.InitContainers) || len(pod.Spec.Containers) != len(sent.Spec.Containers) || len(pod.Spec.Volumes) != len(sent.Spec.Volumes) {
		t.Errorf("vLLM decode pod: %d init containers, %d containers, %d volumes; sent %d, %d, %d", len(pod.Spec.InitContainers), len(pod.Spec.Containers), len(pod.Spec.Volumes),
			len(sent.Spec.InitContainers), len(sent.Spec.Containers), len(sent.Spec.Volumes))
	}

	ts := fixtures.GQAPair(ns, "ts", 8, 4, 4, 512)
	ts.Spec.Prefill.EngineVersion, ts.Spec.Decode.EngineVersion = "0.3.1", "0.3.1"
	if err := k8s.Create(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(ts), pdv1.PDPairReady, metav1.ConditionTrue)
	pod = admit(t, fixtures.DecodePod(ns, "ts-decode-0", "ts").Obj())
	if pod.Annotations[pdv1.AnnotationEngineVersion] != "0.3.1" || pod.Annotations[pdv1.AnnotationDecodeLayout] != "tp=4,dp=1" || fixtures.AgentContainer(pod) == nil {
		t.Errorf("tokenspeed decode pod annotations %v (agent injected: %v); want version 0.3.1 beside tp=4,dp=1", pod.Annotations, fixtures.AgentContainer(pod) != nil)
	}
}
