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
	"encoding/json"
	"errors"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/webhooks"
)

// hostilePair is within every limit of the CRD, yet its plans would hold
// 4096 prefill ranks × 8192 buffers = 33,554,432 fragments.
func hostilePair(ns, name string) *pdv1.PDPair {
	p := fixtures.GQAPair(ns, name, 4096, 1, 4096, 4096)
	for i := range p.Spec.KVBuffers {
		g := &p.Spec.KVBuffers[i].BufferGeometry
		g.PrefillItemBytes, g.DecodeUnitBytes, g.PrefillUnitBytes = ptr.To[int64](1), ptr.To[int64](1), ptr.To[int64](1)
	}
	return p
}

// enforceIn labels the namespace so the validator refuses there.
func enforceIn(t *testing.T, ns string) {
	t.Helper()
	var n corev1.Namespace
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: ns}, &n); err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[pdv1.LabelPDPairValidation] = pdv1.PDPairValidationEnforce
	if err := k8s.Update(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
}

// refusedPDPair expects the API server to refuse the write and returns the
// message and the field the refusal names.
func refusedPDPair(t *testing.T, err error) (string, string) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("the PDPair was admitted (error %v)", err)
	}
	st := se.Status()
	if st.Details == nil || len(st.Details.Causes) == 0 {
		t.Fatalf("refusal without a field: %+v", st)
	}
	return st.Message, st.Details.Causes[0].Field
}

// Off by default: an incompatible and an over-budget PDPair are admitted,
// and their status conditions say what is wrong.
func TestPDPairValidationOffByDefault(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	for _, p := range []*pdv1.PDPair{fixtures.IncompatiblePair(ns, "incompatible"), hostilePair(ns, "hostile")} {
		if err := k8s.Create(ctx, p); err != nil {
			t.Fatalf("%s refused with validation off: %v", p.Name, err)
		}
	}
	got := testutil.WaitCondition(t, k8s, settle, client.ObjectKey{Namespace: ns, Name: "incompatible"}, pdv1.PDPairLayoutCompatible, metav1.ConditionFalse)
	if c := findCondition(got, pdv1.PDPairLayoutCompatible); c.Reason != string(transferplan.ReasonUnitSizeMismatch) {
		t.Errorf("incompatible pair: LayoutCompatible reason %s", c.Reason)
	}
	got = testutil.WaitCondition(t, k8s, settle, client.ObjectKey{Namespace: ns, Name: "hostile"}, pdv1.PDPairStalled, metav1.ConditionTrue)
	if c := findCondition(got, pdv1.PDPairPlansPublished); c.Reason != string(pdv1.ReasonPlanTooLarge) {
		t.Errorf("hostile pair: PlansPublished reason %s", c.Reason)
	}
}

// In a namespace labelled pd.pdtopo.dev/pdpair-validation=enforce,
// `kubectl apply` of an incompatible or over-budget PDPair fails at once with
// the planner's reason and field; compatible ones and spec-preserving
// updates pass.
func TestPDPairValidationByNamespaceLabel(t *testing.T) {
	ns := newNamespace(t)
	enforceIn(t, ns)
	ctx := context.Background()

	msg, field := refusedPDPair(t, k8s.Create(ctx, fixtures.IncompatiblePair(ns, "incompatible")))
	wantAll(t, msg, "UnitSizeMismatch", "prefill unit is 128 bytes, decode unit 256 bytes")
	if field != "spec.kvBuffers[0]" {
		t.Errorf("refusal names field %q, want spec.kvBuffers[0]", field)
	}
	msg, field = refusedPDPair(t, k8s.Create(ctx, hostilePair(ns, "hostile")))
	wantAll(t, msg, "PlanTooLarge", "33554432 fragments", "--max-plan-fragments")
	if field != "spec" {
		t.Errorf("refusal names field %q, want spec", field)
	}

	good := fixtures.GQAPair(ns, "good", 8, 4, 4, 512)
	if err := k8s.Create(ctx, good); err != nil {
		t.Fatalf("a compatible pair was refused: %v", err)
	}
	// Breaking its spec is refused; a label change is not a spec change.
	msg, _ = refusedPDPair(t, retry.RetryOnConflict(retry.DefaultRetry, func() error { // the manager writes status meanwhile
		broken := &pdv1.PDPair{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(good), broken); err != nil {
			return err
		}
		broken.Spec.KVBuffers[0].PrefillUnitBytes = ptr.To[int64](128)
		broken.Spec.KVBuffers[1].PrefillUnitBytes = ptr.To[int64](128)
		return k8s.Update(ctx, broken)
	}))
	wantAll(t, msg, "UnitSizeMismatch")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the manager writes status meanwhile
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(good), good); err != nil {
			return err
		}
		good.Labels = map[string]string{"team": "serving"}
		return k8s.Update(ctx, good)
	})
	if err != nil {
		t.Fatalf("a label change was refused: %v", err)
	}
}

// With --validate-pdpairs the validator refuses in every namespace, without
// reading any namespace (it is given no reader here: a read would panic).
func TestPDPairValidationEverywhere(t *testing.T) {
	v := &webhooks.PDPairValidator{Decoder: admission.NewDecoder(scheme(t)),
		PDPairValidation: webhooks.PDPairValidation{Everywhere: true, Budget: transferplan.DefaultBudget}}
	review := func(p *pdv1.PDPair) admission.Response {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Namespace: "anywhere", Object: runtime.RawExtension{Raw: raw},
		}})
	}
	if r := review(fixtures.IncompatiblePair("anywhere", "p")); r.Allowed || r.Result.Reason != "UnitSizeMismatch" {
		t.Fatalf("incompatible pair: allowed %v, reason %s", r.Allowed, r.Result.Reason)
	}
	if r := review(hostilePair("anywhere", "p")); r.Allowed || r.Result.Reason != metav1.StatusReason(pdv1.ReasonPlanTooLarge) {
		t.Fatalf("hostile pair: allowed %v, reason %s", r.Allowed, r.Result.Reason)
	}
	if r := review(fixtures.GQAPair("anywhere", "p", 8, 4, 4, 512)); !r.Allowed {
		t.Fatalf("compatible pair refused: %s", r.Result.Message)
	}
}

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := pdv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func findCondition(p *pdv1.PDPair, condType pdv1.PDPairConditionType) metav1.Condition {
	for _, c := range p.Status.Conditions {
		if c.Type == string(condType) {
			return c
		}
	}
	return metav1.Condition{}
}

// A model-aware pair is validated from its model: a config the derivation
// refuses and a TP the engine cannot run are refused naming the field; the
// config is read from the ConfigMap spec.model names, and a pair whose
// ConfigMap does not exist yet is admitted (its status will say so).
func TestPDPairValidationOfModelAwarePairs(t *testing.T) {
	ns := newNamespace(t)
	enforceIn(t, ns)
	ctx := context.Background()
	modelPair := func(name string, tp int32, model pdv1.ModelSpec) *pdv1.PDPair {
		return fixtures.Pair(ns, name).PrefillTP(tp).DecodeTP(4).Model("bfloat16", model).Obj()
	}
	llama := `{"architectures": ["LlamaForCausalLM"], "hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80}`
	inline := func(config string) pdv1.ModelSpec {
		return pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(config)}}
	}
	ref := pdv1.ModelSpec{ConfigMapKeyRef: &pdv1.ConfigMapKeyReference{Name: "llama", Key: "config.json"}}

	msg, field := refusedPDPair(t, k8s.Create(ctx, modelPair("bad-config", 8, inline(`{"num_attention_heads": 64, "num_key_value_heads": 12, "num_hidden_layers": 2, "head_dim": 64}`))))
	if field != "spec.model.hfConfig" || !strings.Contains(msg, "InvalidModelConfig") || !strings.Contains(msg, "12 KV heads do not divide num_attention_heads 64") {
		t.Errorf("bad config: field %s, %s", field, msg)
	}
	if err := k8s.Create(ctx, modelPair("configmap-later", 3, ref)); err != nil {
		t.Errorf("a pair whose ConfigMap does not exist yet was refused: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama"}, Data: map[string]string{"config.json": llama}}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// 64 attention heads do not split over prefill TP 3.
	msg, field = refusedPDPair(t, k8s.Create(ctx, modelPair("tp-three", 3, ref)))
	if field != "spec.prefill.tensorParallelSize" || !strings.Contains(msg, "TPDoesNotSplitHeads") || !strings.Contains(msg, "Fix: prefill TP 1, 2, 4, 8, 16, 32 or 64") {
		t.Errorf("TP 3: field %s, %s", field, msg)
	}
	if err := k8s.Create(ctx, modelPair("good", 8, ref)); err != nil {
		t.Errorf("a compatible model-aware pair was refused: %v", err)
	}
}
