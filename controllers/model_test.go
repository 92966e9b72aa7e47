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
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// meta-llama/Llama-3.1-70B's keys that size the cache (80 layers, 8 KV
// heads of 8192 / 64 = 128).
const llamaConfig = `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
	"num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80, "vocab_size": 128256}`

// The model form's rules, through the real API server.
func TestAPIServerRulesOfTheModelForm(t *testing.T) {
	ns := newNamespace(t)
	llama := func(name string) *fixtures.PairBuilder {
		return fixtures.Pair(ns, name).Prefill(8, 1).Decode(4, 1).InlineModel(llamaConfig, "bfloat16")
	}
	for _, c := range []struct {
		name, field, says string
		pair              *pdv1.PDPair
	}{
		{"model and kvBuffers", "spec.kvBuffers", "not both", llama("a").KVPair(80, 512, 256, 256).Obj()},
		{"model and stateBuffers", "spec.stateBuffers", "derives stateBuffers", llama("a").State(fixtures.Geometry(4, 64, 32, 1, 1)).Obj()},
		{"model without a dtype", "spec.kvCacheDtype", "spec.model needs kvCacheDtype", llama("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVCacheDtype = "" }).Obj()},
		{"a dtype without a model", "spec.kvCacheDtype", "describes spec.model's cache", fixtures.Pair(ns, "a").Spec(fixtures.Llama70B(8, 4)).Edit(func(p *pdv1.PDPair) { p.Spec.KVCacheDtype = "bfloat16" }).Obj()},
		{"a role's dtype without a model", "spec.kvCacheDtype", "describes spec.model's cache", fixtures.Pair(ns, "a").Spec(fixtures.Llama70B(8, 4)).Edit(func(p *pdv1.PDPair) { p.Spec.Decode.KVCacheDtype = "fp8" }).Obj()},
		{"an unknown dtype", "spec.kvCacheDtype", "Unsupported value", llama("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVCacheDtype = "int4" }).Obj()},
		{"inline and ConfigMap", "spec.model", "exactly one of them",
			llama("a").Edit(func(p *pdv1.PDPair) {
				p.Spec.Model.ConfigMapKeyRef = &pdv1.ConfigMapKeyReference{Name: "m", Key: "config.json"}
			}).Obj()},
		{"neither inline nor ConfigMap", "spec.model", "exactly one of them", llama("a").Edit(func(p *pdv1.PDPair) { p.Spec.Model.HFConfig = nil }).Obj()},
		{"a config that is not an object", "spec.model.hfConfig", "must be of type object",
			llama("a").Edit(func(p *pdv1.PDPair) { p.Spec.Model.HFConfig.Raw = []byte(`[1, 2]`) }).Obj()},
		{"a ConfigMap key with a slash", "spec.model.configMapKeyRef.key", "should match",
			fixtures.Pair(ns, "a").Prefill(8, 1).Decode(4, 1).ModelRef("m", "a/b", "bfloat16").Obj()},
		{"negative draft layers", "spec.model.draftLayers", "greater than or equal to 0",
			llama("a").Edit(func(p *pdv1.PDPair) { p.Spec.Model.DraftLayers = ptr.To[int32](-1) }).Obj()},
		{"neither model nor kvBuffers", "spec.kvBuffers", "give the model", fixtures.Pair(ns, "a").Prefill(8, 1).Decode(4, 1).Obj()},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), c.pair)
			if err == nil {
				t.Fatalf("the API server accepted %s", c.name)
			}
			assertInvalidField(t, err, c.field, c.says)
		})
	}
	// L1.5 with a model: the backend is derived, so the rule leaves it to
	// the operator; an inline config keeps every key.
	accepted := fixtures.Pair(ns, "mla-l15").Prefill(8, 1).Decode(4, 1).L15().InlineModel(deepseekConfig, "fp8").Obj()
	create(t, accepted)
	if !strings.Contains(string(accepted.Spec.Model.HFConfig.Raw), `"q_lora_rank"`) {
		t.Errorf("the API server pruned the config: %s", accepted.Spec.Model.HFConfig.Raw)
	}
}

const deepseekConfig = `{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_attention_heads": 128,
	"num_key_value_heads": 128, "num_hidden_layers": 61, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
	"num_nextn_predict_layers": 1}`

// A model-aware pair is planned exactly as the explicit pair it derives,
// and its status shows what was derived (worked out by hand: 8 KV heads of
// 128 × 2 B; prefill 1 head per rank, decode 2).
func TestModelAwarePairPlansAsItsExplicitTwin(t *testing.T) {
	ns := newNamespace(t)
	model := fixtures.Pair(ns, "llama-model").Prefill(8, 1).Decode(4, 1).InlineModel(llamaConfig, "bfloat16").Obj()
	twin := fixtures.Pair(ns, "llama-explicit").Prefill(8, 1).Decode(4, 1).KVPair(80, 512, 256, 256).Obj()
	create(t, model)
	create(t, twin)
	gotModel, gotTwin := waitObserved(t, model), waitObserved(t, twin)
	wantCondition(t, gotModel, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if gotModel.Status.Plan == nil || gotTwin.Status.Plan == nil || gotModel.Status.Plan.Hash != gotTwin.Status.Plan.Hash {
		t.Fatalf("plans differ: model %+v, explicit %+v", gotModel.Status.Plan, gotTwin.Status.Plan)
	}
	d := gotModel.Status.Derived
	if d == nil || d.AttentionBackend != pdv1.AttentionMHA || !strings.Contains(d.Model, "LlamaForCausalLM") || len(d.KVBuffers) != 2 {
		t.Fatalf("status.derived %+v", d)
	}
	for i, kind := range []pdv1.KVBufferKind{pdv1.KVTargetK, pdv1.KVTargetV} {
		g := d.KVBuffers[i]
		if g.Kind != kind || g.Count != 80 || g.DecodeItemBytes != 512 || ptr.Deref(g.PrefillItemBytes, 0) != 256 ||
			ptr.Deref(g.DecodeUnitBytes, 0) != 256 || ptr.Deref(g.PrefillUnitBytes, 0) != 256 {
			t.Errorf("derived group %d: %+v", i, g)
		}
	}
	if gotTwin.Status.Derived != nil {
		t.Errorf("an explicit pair shows derived buffers: %+v", gotTwin.Status.Derived)
	}
}

// Refusals of the model reach LayoutCompatible with the derivation's reason,
// the key and the fix; nothing is planned or published.
func TestModelRefusalsReachTheStatus(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		pair   *pdv1.PDPair
		reason pdv1.PDPairConditionReason
		says   []string
	}{
		{fixtures.Pair(ns, "kv-not-dividing").Prefill(8, 1).Decode(4, 1).InlineModel(`{"num_attention_heads": 64, "num_key_value_heads": 12, "num_hidden_layers": 2, "head_dim": 128}`, "bfloat16").Obj(),
			pdv1.ReasonInvalidModelConfig, []string{"model.hfConfig: num_key_value_heads: 12 KV heads do not divide num_attention_heads 64"}},
		{fixtures.Pair(ns, "zero-heads").Prefill(8, 1).Decode(4, 1).InlineModel(`{"num_attention_heads": 0, "num_hidden_layers": 2, "head_dim": 128}`, "bfloat16").Obj(),
			pdv1.ReasonInvalidModelConfig, []string{"num_attention_heads: 0 is out of range"}},
		// 64 attention heads do not split over 3 ranks.
		{fixtures.Pair(ns, "tp-three").Prefill(3, 1).Decode(4, 1).InlineModel(llamaConfig, "bfloat16").Obj(),
			pdv1.ReasonTPDoesNotSplitHeads, []string{"prefill TP 3 per DP group does not divide the 64 attention heads", "Fix: prefill TP 1, 2, 4, 8, 16, 32 or 64"}},
		// Decode ranks beyond the 8 KV heads against 4 heads per prefill rank.
		{fixtures.Pair(ns, "p2-d16").Prefill(2, 1).Decode(16, 1).InlineModel(llamaConfig, "bfloat16").Obj(),
			pdv1.ReasonUnsupportedHeterogeneousTP, []string{"Fix: decode TP 1, 2, 4 or 8 (keeping prefill TP 2), or prefill TP 8, 16, 32 or 64 (keeping decode TP 16) would work with these 8 KV heads"}},
		// A float8 prefill against a bfloat16 decode: units of 128 and 256 bytes.
		{fixtures.Pair(ns, "fp8-prefill").Prefill(8, 1).Decode(4, 1).InlineModel(llamaConfig, "bfloat16").Edit(func(p *pdv1.PDPair) { p.Spec.Prefill.KVCacheDtype = "fp8" }).Obj(),
			pdv1.ReasonUnitSizeMismatch, []string{"prefill unit is 128 bytes, decode unit 256 bytes", "set the same kvCacheDtype on both roles"}},
		{fixtures.Pair(ns, "mla-for-llama").MLA().Prefill(8, 1).Decode(4, 1).InlineModel(llamaConfig, "bfloat16").Obj(),
			pdv1.ReasonInvalidModelConfig, []string{"attentionBackend is MLA, but the config of LlamaForCausalLM has no kv_lora_rank"}},
	}
	for _, c := range cases {
		create(t, c.pair)
	}
	for _, c := range cases {
		t.Run(c.pair.Name, func(t *testing.T) {
			got := waitObserved(t, c.pair)
			cond := wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionFalse, c.reason)
			for _, s := range c.says {
				if !strings.Contains(cond.Message, s) {
					t.Errorf("message %q does not say %q", cond.Message, s)
				}
			}
			if !strings.Contains(cond.Message, ". Fix: ") {
				t.Errorf("message %q does not end with a fix", cond.Message)
			}
			if got.Status.Plan != nil || len(planConfigMaps(t, got)) != 0 {
				t.Errorf("plans published for a refused pair")
			}
		})
	}
}

// A pair whose config is in a ConfigMap says so until the ConfigMap exists,
// then plans from it, and re-plans when it changes.
func TestModelConfigMapIsReadAndFollowed(t *testing.T) {
	ns := newNamespace(t)
	pair := fixtures.Pair(ns, "from-configmap").Prefill(8, 1).Decode(4, 1).ModelRef("llama", "config.json", "bfloat16").Obj()
	create(t, pair)
	got := waitObserved(t, pair)
	cond := wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionFalse, pdv1.ReasonModelConfigUnavailable)
	if !strings.Contains(cond.Message, "ConfigMap "+ns+"/llama does not exist") || !strings.Contains(cond.Message, "Fix: create ConfigMap llama") {
		t.Errorf("message %q", cond.Message)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama"}, Data: map[string]string{"config.json": llamaConfig}}
	create(t, cm)
	derivedLayers := func(layers int32) func() error {
		return func() error {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), got); err != nil {
				return err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairReady))
			d := got.Status.Derived
			if c == nil || c.Status != metav1.ConditionTrue || d == nil || d.KVBuffers[0].Count != layers {
				return fmt.Errorf("Ready %+v, derived %+v", c, d)
			}
			var now corev1.ConfigMap
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cm), &now); err != nil {
				return err
			}
			if d.ConfigMapResourceVersion != now.ResourceVersion {
				return fmt.Errorf("derived from resourceVersion %s, the ConfigMap is at %s", d.ConfigMapResourceVersion, now.ResourceVersion)
			}
			return nil
		}
	}
	testutil.Eventually(t, settle, "the pair plans from the ConfigMap", derivedLayers(80))
	// 80 → 40 layers: the recheck reads the new version and re-plans.
	cm.Data["config.json"] = strings.Replace(llamaConfig, `"num_hidden_layers": 80`, `"num_hidden_layers": 40`, 1)
	if err := k8s.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the pair re-plans from the changed ConfigMap", derivedLayers(40))
}
