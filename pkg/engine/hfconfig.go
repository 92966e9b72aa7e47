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

package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// HFConfig is a model's config.json as the engines other than tokenspeed
// read it: checked by pkg/modelgeom (every key that sizes the cache), and
// kept as JSON for the keys their rules read beside those (sliding windows,
// layer types, an indexer).
type HFConfig struct {
	// Model is what pkg/modelgeom read.
	Model *modelgeom.Model
	// text is the text config (text_config for multimodal models, as the
	// engines read it), numbers kept as json.Number; top is the whole
	// config (architectures live there).
	text, top map[string]any
}

// ReadHFConfig reads the pair's model config: spec.model.hfConfig inline,
// or in.ModelConfig for a configMapKeyRef. A config that cannot be read is
// a *transferplan.LayoutError of the model's field.
func ReadHFConfig(spec pdv1.PDPairSpec, in Inputs) (*HFConfig, error) {
	source, config := "model.hfConfig", []byte(nil)
	switch {
	case spec.Model == nil:
		return nil, (&transferplan.LayoutError{Reason: transferplan.ReasonInvalidLayout, Field: "model",
			Message: "the pair's engine judges it from the model, and spec.model is absent"}).WithFix("give spec.model.hfConfig, the model's config.json")
	case spec.Model.HFConfig != nil:
		config = spec.Model.HFConfig.Raw
		if config == nil && spec.Model.HFConfig.Object != nil {
			var err error
			if config, err = json.Marshal(spec.Model.HFConfig.Object); err != nil {
				return nil, modelInvalid(source, "not JSON: "+err.Error())
			}
		}
	case spec.Model.ConfigMapKeyRef != nil:
		source, config = "model.configMapKeyRef", in.ModelConfig
		if config == nil {
			ref := spec.Model.ConfigMapKeyRef
			return nil, (&transferplan.LayoutError{Reason: transferplan.Reason(pdv1.ReasonModelConfigUnavailable), Field: source,
				Message: fmt.Sprintf("%s: the config is in key %q of ConfigMap %s, which was not read", source, ref.Key, ref.Name)}).
				WithFix("the operator reads it from the PDPair's namespace; offline, give the config.json with --hf-config")
		}
	}
	// The engines' rules need the attention shape, not derived buffers:
	// architectures the derivation does not model (GLM-5) are read too.
	m, err := modelgeom.ParseShape(config)
	if err != nil {
		var me *modelgeom.Error
		if errors.As(err, &me) {
			return nil, &transferplan.LayoutError{Reason: transferplan.Reason(me.Reason), Field: source, Message: source + ": " + me.Message(), Fix: me.Fix}
		}
		return nil, err
	}
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, modelInvalid(source, err.Error())
	}
	text := top
	if tc, ok := top["text_config"].(map[string]any); ok {
		text = tc
	}
	return &HFConfig{Model: m, text: text, top: top}, nil
}

func modelInvalid(source, problem string) error {
	return (&transferplan.LayoutError{Reason: transferplan.Reason(modelgeom.ReasonInvalidModelConfig), Field: source,
		Message: source + ": " + problem}).WithFix("give the model's config.json as a JSON object")
}

// Int is the text config's integer key, 0 when absent or not an integer.
func (c *HFConfig) Int(key string) int {
	if n, ok := c.text[key].(json.Number); ok {
		if v, err := n.Int64(); err == nil && v > 0 && v < 1<<31 {
			return int(v)
		}
	}
	return 0
}

// Has reports whether the text config holds key with a non-null value.
func (c *HFConfig) Has(key string) bool { return c.text[key] != nil }
