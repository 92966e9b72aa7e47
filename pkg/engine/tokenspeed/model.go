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

package tokenspeed

import (
	"encoding/json"
	"errors"
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// layoutPair is a PDPair spec on the v1 wire, ready to plan.
type layoutPair struct {
	// layout is the planner's input.
	layout planv1.Layout
	// explicit is the spec in explicit form: a model-aware spec with the
	// derived attention backend, kvBuffers and stateBuffers in place of
	// spec.model and the dtypes (every size given, none defaulted).
	explicit pdv1.PDPairSpec
	// derived is what was derived from spec.model, for the status; nil for
	// explicit pairs.
	derived *pdv1.DerivedBuffers
	model   *modelplan.Pair
}

// resolveLayout turns a spec into the planner's input. For a model-aware
// spec it derives the buffers from the model's config.json: the inline
// hfConfig, or config, the bytes the caller read from the ConfigMap key
// spec.model.configMapKeyRef names. A config the derivation refuses is a
// *transferplan.LayoutError with the derivation's reason (InvalidModelConfig,
// UnsupportedKVCacheDtype, TPDoesNotSplitHeads) and nothing is planned.
// An explicit spec's pair comes back beside its refusal (InvalidLayout or
// the planner's checks of the layout): the caller judges it.
func resolveLayout(spec pdv1.PDPairSpec, config []byte) (*layoutPair, error) {
	if spec.Model == nil {
		l, err := fromExplicit(spec)
		return &layoutPair{layout: l, explicit: spec}, err
	}
	r, err := derive(spec, config)
	if err != nil {
		return nil, err
	}
	r.layout, err = fromExplicit(r.explicit)
	return r, err
}

// FromSpec is the planner's input of a v1 spec, explicit or with an inline
// hfConfig: for the prefill peer, which plays tokenspeed's prefill side,
// and for tests that plan a pair by hand.
func FromSpec(spec pdv1.PDPairSpec) (planv1.Layout, error) {
	r, err := resolveLayout(spec, nil)
	if r == nil {
		return planv1.Layout{}, err
	}
	return r.layout, err
}

// explain gives a planner refusal of a model-aware pair the model's fix:
// the TP sizes the engine can run the model with at which the pair plans.
func (r *layoutPair) explain(err error) error {
	var le *transferplan.LayoutError
	if r == nil || r.model == nil || !errors.As(err, &le) {
		return err
	}
	r.model.Explain(le)
	return err
}

func derive(spec pdv1.PDPairSpec, config []byte) (*layoutPair, error) {
	source := "model.hfConfig"
	switch {
	case spec.Model.HFConfig != nil && spec.Model.ConfigMapKeyRef == nil:
		config = spec.Model.HFConfig.Raw
		if config == nil && spec.Model.HFConfig.Object != nil {
			var err error
			if config, err = json.Marshal(spec.Model.HFConfig.Object); err != nil {
				return nil, invalid(source, "give the model's config.json as a JSON object", "not JSON: %v", err)
			}
		}
	case spec.Model.ConfigMapKeyRef != nil && spec.Model.HFConfig == nil:
		ref := spec.Model.ConfigMapKeyRef
		source = "model.configMapKeyRef"
		if config == nil {
			return nil, (&transferplan.LayoutError{Reason: transferplan.Reason(pdv1.ReasonModelConfigUnavailable), Field: source,
				Message: fmt.Sprintf("%s: the config is in key %q of ConfigMap %s, which was not read", source, ref.Key, ref.Name)}).
				WithFix("the operator reads it from the PDPair's namespace; offline, give the config.json with --hf-config")
		}
	default:
		return nil, invalid("model", "give hfConfig or configMapKeyRef", "give the model's config.json inline (hfConfig) or in a ConfigMap (configMapKeyRef), exactly one of them")
	}
	m, err := modelgeom.ParseConfig(config)
	if err != nil {
		return nil, modelError(err, source)
	}
	p := &modelplan.Pair{Model: m, Options: options(spec), MLAL15Cache: spec.MLAL15Cache}
	d, err := m.Derive(p.Options)
	if err != nil {
		return nil, modelError(err, source)
	}
	if spec.AttentionBackend == pdv1.AttentionMLA && d.Attention != string(pdv1.AttentionMLA) {
		return nil, modelError(&modelgeom.Error{Reason: modelgeom.ReasonInvalidModelConfig, Key: "kv_lora_rank", Field: "attentionBackend",
			Problem: fmt.Sprintf("attentionBackend is MLA, but the config of %s has no kv_lora_rank: it is not an MLA model", m),
			Fix:     "remove attentionBackend: with spec.model it is derived from the config"}, source)
	}
	if le := p.Check(); le != nil {
		return nil, le
	}
	return &layoutPair{explicit: explicitSpec(spec, d), derived: derived(d, p.Options), model: p}, nil
}

// options are the derivation's inputs from the spec.
func options(spec pdv1.PDPairSpec) modelgeom.Options {
	o := modelgeom.Options{
		KVCacheDtype:  string(spec.KVCacheDtype),
		TokensPerPage: int(deref32(spec.TokensPerPage, 1)),
		Prefill:       modelgeom.Role{TP: int(spec.Prefill.TensorParallelSize), DP: int(spec.Prefill.DataParallel()), KVCacheDtype: string(spec.Prefill.KVCacheDtype)},
		Decode:        modelgeom.Role{TP: int(spec.Decode.TensorParallelSize), DP: int(spec.Decode.DataParallel()), KVCacheDtype: string(spec.Decode.KVCacheDtype)},
	}
	if n := spec.Model.DraftLayers; n != nil {
		v := int(*n)
		o.DraftLayers = &v
	}
	return o
}

// modelError is a derivation refusal as a LayoutError of the spec field to
// change (the config's source for the config's own keys).
func modelError(err error, source string) error {
	var me *modelgeom.Error
	if !errors.As(err, &me) {
		return err
	}
	field := me.Field
	switch {
	case field != "":
	case me.Reason == modelgeom.ReasonUnsupportedKVCacheDtype || me.Reason == modelgeom.ReasonInvalidLayout:
		field = me.Key
		if me.Key == "draftLayers" {
			field = "model.draftLayers"
		}
	default:
		field = source
	}
	msg := me.Message()
	if field != me.Key {
		msg = field + ": " + msg
	}
	return &transferplan.LayoutError{Reason: transferplan.Reason(me.Reason), Field: field, Message: msg, Fix: me.Fix}
}

// explicitSpec is the spec with the derived buffers in place of the model.
func explicitSpec(spec pdv1.PDPairSpec, d *modelgeom.Pair) pdv1.PDPairSpec {
	out := *spec.DeepCopy()
	out.Model, out.KVCacheDtype = nil, ""
	out.Prefill.KVCacheDtype, out.Decode.KVCacheDtype = "", ""
	out.AttentionBackend = pdv1.AttentionBackend(d.Attention)
	out.KVBuffers, out.StateBuffers = kvGroups(d.KVBuffers), stateGroups(d.StateBuffers)
	return out
}

func geometry(g modelgeom.Group) pdv1.BufferGeometry {
	pi, du, pu := g.PrefillItemBytes, g.DecodeUnitBytes, g.PrefillUnitBytes
	return pdv1.BufferGeometry{Count: int32(g.Count), DecodeItemBytes: g.DecodeItemBytes,
		PrefillItemBytes: &pi, DecodeUnitBytes: &du, PrefillUnitBytes: &pu}
}

func kvGroups(gs []modelgeom.Group) []pdv1.KVBufferGroup {
	out := make([]pdv1.KVBufferGroup, len(gs))
	for i, g := range gs {
		out[i] = pdv1.KVBufferGroup{Kind: pdv1.KVBufferKind(g.Kind), BufferGeometry: geometry(g)}
	}
	return out
}

func stateGroups(gs []modelgeom.Group) []pdv1.StateBufferGroup {
	if len(gs) == 0 {
		return nil
	}
	out := make([]pdv1.StateBufferGroup, len(gs))
	for i, g := range gs {
		out[i] = pdv1.StateBufferGroup{BufferGeometry: geometry(g)}
	}
	return out
}

// derived is the status's account of the derivation.
func derived(d *modelgeom.Pair, o modelgeom.Options) *pdv1.DerivedBuffers {
	dtype := o.KVCacheDtype
	for _, r := range []struct {
		name string
		role modelgeom.Role
	}{{"prefill", o.Prefill}, {"decode", o.Decode}} {
		if r.role.KVCacheDtype != "" {
			dtype += fmt.Sprintf(", %s %s", r.name, r.role.KVCacheDtype)
		}
	}
	return &pdv1.DerivedBuffers{
		Model:            fmt.Sprintf("%s; KV cache %s, %d token(s) per page", d.Model.Describe(), dtype, o.TokensPerPage),
		AttentionBackend: pdv1.AttentionBackend(d.Attention),
		KVBuffers:        kvGroups(d.KVBuffers),
		StateBuffers:     stateGroups(d.StateBuffers),
	}
}
