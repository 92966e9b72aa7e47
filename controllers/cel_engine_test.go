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
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// engineModel is a small GQA config.json (8 KV heads), enough for the
// structural rules: they never read it.
const engineModel = `{"architectures":["LlamaForCausalLM"],"num_hidden_layers":4,"num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"head_dim":128}`

// enginePair is a model-aware pair on engine (nil: no spec.engine), TP 4
// and 2, with the fields each engine needs set.
func enginePair(ns, name string, engine *pdv1.EngineSpec) *fixtures.PairBuilder {
	b := fixtures.Pair(ns, name).Prefill(4, 1).Decode(2, 1).InlineModel(engineModel, "bfloat16")
	return b.Edit(func(p *pdv1.PDPair) {
		p.Spec.Engine = engine
		if engine != nil && engine.Name == pdv1.EngineVLLM {
			p.Spec.Prefill.TokensPerPage, p.Spec.Decode.TokensPerPage = ptr.To[int32](16), ptr.To[int32](16)
		}
	})
}

var (
	vllmEngine       = &pdv1.EngineSpec{Name: pdv1.EngineVLLM}
	sglangEngine     = &pdv1.EngineSpec{Name: pdv1.EngineSGLang}
	tokenspeedEngine = &pdv1.EngineSpec{Name: pdv1.EngineTokenspeed}
)

// The engine rules of the CRD through the real API server: a field that
// does not apply to the engine named is refused, and the message names the
// field and the engine.
func TestAPIServerRejectsFieldsOfAnotherEngine(t *testing.T) {
	ns := newNamespace(t)
	edit := func(b *fixtures.PairBuilder, f func(*pdv1.PDPair)) *pdv1.PDPair { return b.Edit(f).Obj() }
	cases := []struct {
		name  string
		pair  *pdv1.PDPair
		field string
		says  string
	}{
		{"kvCacheLayout without engine", edit(enginePair(ns, "a", nil), func(p *pdv1.PDPair) { p.Spec.Prefill.KVCacheLayout = pdv1.KVCacheLayoutNHD }),
			"spec.prefill.kvCacheLayout", "prefill.kvCacheLayout (VLLM_KV_CACHE_LAYOUT) applies to engine vllm only, not to engine tokenspeed"},
		{"kvCacheLayout on sglang", edit(enginePair(ns, "a", sglangEngine), func(p *pdv1.PDPair) { p.Spec.Decode.KVCacheLayout = pdv1.KVCacheLayoutHND }),
			"spec.decode.kvCacheLayout", "decode.kvCacheLayout (VLLM_KV_CACHE_LAYOUT) applies to engine vllm only, not to engine sglang"},
		{"unknown kvCacheLayout", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.Decode.KVCacheLayout = "HNC" }),
			"spec.decode.kvCacheLayout", "Unsupported value"},
		{"pipelineParallelSize on vllm", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.Prefill.PipelineParallelSize = ptr.To[int32](2) }),
			"spec.prefill.pipelineParallelSize", "prefill.pipelineParallelSize (--pp-size) applies to engine sglang only, not to engine vllm"},
		{"pipelineParallelSize on tokenspeed", edit(enginePair(ns, "a", tokenspeedEngine), func(p *pdv1.PDPair) { p.Spec.Decode.PipelineParallelSize = ptr.To[int32](2) }),
			"spec.decode.pipelineParallelSize", "decode.pipelineParallelSize (--pp-size) applies to engine sglang only, not to engine tokenspeed"},
		{"pipelineParallelSize 0", edit(enginePair(ns, "a", sglangEngine), func(p *pdv1.PDPair) { p.Spec.Decode.PipelineParallelSize = ptr.To[int32](0) }),
			"spec.decode.pipelineParallelSize", "greater than or equal to 1"},
		{"role tokensPerPage on tokenspeed", edit(enginePair(ns, "a", nil), func(p *pdv1.PDPair) { p.Spec.Prefill.TokensPerPage = ptr.To[int32](16) }),
			"spec.prefill.tokensPerPage", "prefill.tokensPerPage applies to engines vllm and sglang, not to engine tokenspeed"},
		{"vllm without a decode block size", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.Decode.TokensPerPage = nil }),
			"spec.decode.tokensPerPage", "engine vllm needs decode.tokensPerPage, its --block-size"},
		{"role tokensPerPage 0", edit(enginePair(ns, "a", sglangEngine), func(p *pdv1.PDPair) { p.Spec.Prefill.TokensPerPage = ptr.To[int32](0) }),
			"spec.prefill.tokensPerPage", "greater than or equal to 1"},
		{"DP attention on vllm", enginePair(ns, "a", vllmEngine).Prefill(4, 2).Obj(),
			"spec.prefill.dataParallelSize", "prefill.dataParallelSize is DP attention, which engine vllm does not run"},
		{"wire CacheContract on vllm", enginePair(ns, "a", vllmEngine).Wire(pdv1.WireCacheContract).Obj(),
			"spec.wire", "spec.wire is the protocol of tokenspeed; engine vllm moves KV cache through engine.kvConnector"},
		{"wire CacheContract on sglang", enginePair(ns, "a", sglangEngine).Wire(pdv1.WireCacheContract).Obj(),
			"spec.wire", "spec.wire is the protocol of tokenspeed; engine sglang moves KV cache through engine.kvConnector"},
		{"sglang without a model", edit(fixtures.Pair(ns, "a").Spec(fixtures.Llama70B(8, 4)), func(p *pdv1.PDPair) { p.Spec.Engine = sglangEngine }),
			"spec.model", "engine sglang judges the pair from the model: give spec.model"},
		{"L1.5 cache on vllm", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.MLAL15Cache = true }),
			"spec.mlaL15Cache", "mlaL15Cache is a cache of tokenspeed, not of engine vllm"},
		{"kvConnector on tokenspeed", enginePair(ns, "a", &pdv1.EngineSpec{Name: pdv1.EngineTokenspeed, KVConnector: pdv1.KVConnectorMooncake}).Obj(),
			"spec.engine.kvConnector", "engine.kvConnector is not read for engine tokenspeed"},
		{"mooncake on vllm", enginePair(ns, "a", &pdv1.EngineSpec{Name: pdv1.EngineVLLM, KVConnector: pdv1.KVConnectorMooncake}).Obj(),
			"spec.engine.kvConnector", "engine.kvConnector for engine vllm is NixlConnector"},
		{"NixlConnector on sglang", enginePair(ns, "a", &pdv1.EngineSpec{Name: pdv1.EngineSGLang, KVConnector: pdv1.KVConnectorNixl}).Obj(),
			"spec.engine.kvConnector", "engine.kvConnector for engine sglang is mooncake or nixl"},
		{"unknown engine", enginePair(ns, "a", &pdv1.EngineSpec{Name: "trtllm"}).Obj(), "spec.engine.name", "Unsupported value"},
		{"tokenspeed model without a dtype", edit(enginePair(ns, "a", nil), func(p *pdv1.PDPair) { p.Spec.KVCacheDtype = "" }),
			"spec.kvCacheDtype", "spec.model needs kvCacheDtype"},
		{"vllm with a prefill version only", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.Prefill.EngineVersion = "0.11.0" }),
			"spec.decode.engineVersion", "engine vllm compares the engineVersion of both roles (its handshake hashes the version): give engineVersion on both roles or on neither; prefill gives 0.11.0, decode none"},
		{"vllm with a decode version only", edit(enginePair(ns, "a", vllmEngine), func(p *pdv1.PDPair) { p.Spec.Decode.EngineVersion = "0.11.0" }),
			"spec.decode.engineVersion", "prefill gives none, decode 0.11.0"},
		{"a version with a v", edit(enginePair(ns, "a", sglangEngine), func(p *pdv1.PDPair) { p.Spec.Prefill.EngineVersion = "v0.5.3" }),
			"spec.prefill.engineVersion", "should match '^[0-9][0-9A-Za-z.+_-]*$'"},
		{"a version past 64 characters", edit(enginePair(ns, "a", nil), func(p *pdv1.PDPair) { p.Spec.Decode.EngineVersion = "0." + strings.Repeat("1", 63) }),
			"spec.decode.engineVersion", "may not be more than 64 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), c.pair)
			if err == nil {
				t.Fatalf("the API server accepted %s", c.name)
			}
			assertInvalidField(t, err, c.field, c.says)
		})
	}
}

// What the engine rules allow: each engine's own fields, its connectors,
// per-role dtypes without spec.kvCacheDtype, and a tokenspeed pair named
// explicitly as well as by omission.
func TestAPIServerAcceptsEachEnginesFields(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name string
		pair *pdv1.PDPair
	}{
		{"tokenspeed by omission", enginePair(ns, "ts-implicit", nil).Obj()},
		{"tokenspeed named", enginePair(ns, "ts-named", tokenspeedEngine).Obj()},
		{"vllm, every field", enginePair(ns, "vllm-all", &pdv1.EngineSpec{Name: pdv1.EngineVLLM, KVConnector: pdv1.KVConnectorNixl}).Edit(func(p *pdv1.PDPair) {
			p.Spec.KVCacheDtype = ""
			p.Spec.Prefill.KVCacheLayout, p.Spec.Decode.KVCacheLayout = pdv1.KVCacheLayoutHND, pdv1.KVCacheLayoutNHD
			p.Spec.Prefill.KVCacheDtype, p.Spec.Decode.KVCacheDtype = "auto", "fp8_inc"
		}).Obj()},
		{"vllm, wire V1 written out", enginePair(ns, "vllm-v1", vllmEngine).Wire(pdv1.WireV1).Obj()},
		{"sglang mooncake with DP attention and PP", enginePair(ns, "sglang-mooncake", &pdv1.EngineSpec{Name: pdv1.EngineSGLang, KVConnector: pdv1.KVConnectorMooncake}).Prefill(8, 2).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.TokensPerPage, p.Spec.Decode.TokensPerPage = ptr.To[int32](64), ptr.To[int32](64)
			p.Spec.Prefill.PipelineParallelSize, p.Spec.Decode.PipelineParallelSize = ptr.To[int32](2), ptr.To[int32](1)
			p.Spec.Decode.KVCacheDtype = "fp4_e2m1"
		}).Obj()},
		{"vllm with both versions, different", enginePair(ns, "vllm-versions", vllmEngine).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.10.2", "0.11.1.dev5+g1a2b3c4"
		}).Obj()},
		{"sglang with a decode version only", enginePair(ns, "sglang-version", sglangEngine).Edit(func(p *pdv1.PDPair) { p.Spec.Decode.EngineVersion = "0.5.3rc0" }).Obj()},
		{"tokenspeed with versions", enginePair(ns, "ts-versions", nil).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.3.1", "0.3.1"
		}).Obj()},
		{"sglang nixl, page size from the spec", enginePair(ns, "sglang-nixl", &pdv1.EngineSpec{Name: pdv1.EngineSGLang, KVConnector: pdv1.KVConnectorSGLangNixl}).TokensPerPage(32).Obj()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { create(t, c.pair) })
	}
}
