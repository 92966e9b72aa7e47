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

package modelflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
)

// EngineFlags name the engine a pair or an advice is judged by, and the
// per-role settings vLLM and SGLang judge a pair by.
type EngineFlags struct {
	Engine      string
	KVConnector string
	// PrefillTokensPerPage and DecodeTokensPerPage are a role's page
	// (vLLM: block) size when it differs from --tokens-per-page.
	PrefillTokensPerPage, DecodeTokensPerPage int
	// KVCacheLayout is both roles' VLLM_KV_CACHE_LAYOUT; the role flags
	// override it.
	KVCacheLayout, PrefillKVCacheLayout, DecodeKVCacheLayout string
	// PrefillPP and DecodePP are SGLang's --pp-size (0: unset).
	PrefillPP, DecodePP int

	fs *pflag.FlagSet
}

// engineOnly are the flags whose PDPair fields only some engines read; the
// API server refuses the fields on the others (PDPairSpec's rules in
// api/v1alpha1), so the command line does too.
var engineOnly = []struct {
	flag    string
	engines []pdv1.EngineName
}{
	{"kv-connector", []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang}},
	{"prefill-tokens-per-page", []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang}},
	{"decode-tokens-per-page", []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang}},
	{"kv-cache-layout", []pdv1.EngineName{pdv1.EngineVLLM}},
	{"prefill-kv-cache-layout", []pdv1.EngineName{pdv1.EngineVLLM}},
	{"decode-kv-cache-layout", []pdv1.EngineName{pdv1.EngineVLLM}},
	{"prefill-pp", []pdv1.EngineName{pdv1.EngineSGLang}},
	{"decode-pp", []pdv1.EngineName{pdv1.EngineSGLang}},
	{"prefill-dp", []pdv1.EngineName{pdv1.EngineTokenspeed, pdv1.EngineSGLang}},
	{"decode-dp", []pdv1.EngineName{pdv1.EngineTokenspeed, pdv1.EngineSGLang}},
	{"mla-l15-cache", []pdv1.EngineName{pdv1.EngineTokenspeed}},
	{"draft-layers", []pdv1.EngineName{pdv1.EngineTokenspeed}},
}

// AddEngine registers the engine flags on fs.
func (f *EngineFlags) AddEngine(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.Engine, "engine", "", "the engine both roles run, whose rules judge the pair: "+strings.Join(engines.Registry.Names(), ", ")+" (default tokenspeed)")
	fs.StringVar(&f.KVConnector, "kv-connector", "", "vllm, sglang: spec.engine.kvConnector, vLLM's kv_connector (NixlConnector) or SGLang's --disaggregation-transfer-backend (mooncake, nixl)")
	fs.IntVar(&f.PrefillTokensPerPage, "prefill-tokens-per-page", 0, "vllm, sglang: the prefill's --block-size (vLLM) or --page-size (SGLang) when it differs from --tokens-per-page")
	fs.IntVar(&f.DecodeTokensPerPage, "decode-tokens-per-page", 0, "vllm, sglang: the decode's --block-size or --page-size when it differs from --tokens-per-page")
	fs.StringVar(&f.KVCacheLayout, "kv-cache-layout", "", "vllm: both roles' VLLM_KV_CACHE_LAYOUT, HND or NHD (default HND)")
	fs.StringVar(&f.PrefillKVCacheLayout, "prefill-kv-cache-layout", "", "vllm: the prefill's VLLM_KV_CACHE_LAYOUT when it differs from --kv-cache-layout")
	fs.StringVar(&f.DecodeKVCacheLayout, "decode-kv-cache-layout", "", "vllm: the decode's VLLM_KV_CACHE_LAYOUT when it differs from --kv-cache-layout")
	fs.IntVar(&f.PrefillPP, "prefill-pp", 0, "sglang: the prefill's --pp-size (default 1)")
	fs.IntVar(&f.DecodePP, "decode-pp", 0, "sglang: the decode's --pp-size (default 1)")
}

// EngineOf is the engine --engine names (tokenspeed when it names none),
// with the engine flags checked against it.
func (f *EngineFlags) EngineOf() (engine.Engine, error) {
	eng, ok := engines.Lookup(f.Engine)
	if !ok {
		return nil, cli.UsageErrorf("--engine %q is not an engine pdtopo knows; known engines: %s", f.Engine, strings.Join(engines.Registry.Names(), ", "))
	}
	name := pdv1.EngineName(eng.Name())
	for _, o := range engineOnly {
		if f.fs != nil && f.fs.Changed(o.flag) && !slices.Contains(o.engines, name) {
			return nil, cli.UsageErrorf("--%s applies to engine %s, not to engine %s: remove it", o.flag, joinEngines(o.engines), name)
		}
	}
	for _, l := range []struct{ flag, value string }{{"--kv-cache-layout", f.KVCacheLayout}, {"--prefill-kv-cache-layout", f.PrefillKVCacheLayout}, {"--decode-kv-cache-layout", f.DecodeKVCacheLayout}} {
		if l.value != "" && l.value != string(pdv1.KVCacheLayoutHND) && l.value != string(pdv1.KVCacheLayoutNHD) {
			return nil, cli.UsageErrorf("%s must be HND or NHD (VLLM_KV_CACHE_LAYOUT), got %q", l.flag, l.value)
		}
	}
	for _, n := range []struct {
		flag      string
		value, hi int
	}{{"--prefill-tokens-per-page", f.PrefillTokensPerPage, 65536}, {"--decode-tokens-per-page", f.DecodeTokensPerPage, 65536}, {"--prefill-pp", f.PrefillPP, 4096}, {"--decode-pp", f.DecodePP, 4096}} {
		if n.value < 0 || n.value > n.hi || (n.value == 0 && f.fs != nil && f.fs.Changed(strings.TrimPrefix(n.flag, "--"))) {
			return nil, cli.UsageErrorf("%s must be from 1 to %d, got %d", n.flag, n.hi, n.value)
		}
	}
	return eng, nil
}

func joinEngines(names []pdv1.EngineName) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, " or ")
}

// Spec is the model-aware spec of the flags for eng, with config (the
// model's config.json) inline.
func (f *Flags) Spec(eng engine.Engine, config []byte, prefillTP, prefillDP, decodeTP, decodeDP int) pdv1.PDPairSpec {
	t := int32(f.TokensPerPage)
	spec := pdv1.PDPairSpec{
		TokensPerPage: &t,
		KVCacheDtype:  pdv1.KVCacheDtype(f.KVCacheDtype),
		MLAL15Cache:   f.MLAL15Cache,
		Prefill:       pdv1.FleetLayout{TensorParallelSize: int32(prefillTP), DataParallelSize: ptr.To(int32(prefillDP)), KVCacheDtype: pdv1.KVCacheDtype(f.PrefillDtype)},
		Decode:        pdv1.FleetLayout{TensorParallelSize: int32(decodeTP), DataParallelSize: ptr.To(int32(decodeDP)), KVCacheDtype: pdv1.KVCacheDtype(f.DecodeDtype)},
		Model:         &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: config}},
	}
	if f.DraftLayers >= 0 {
		spec.Model.DraftLayers = ptr.To(int32(f.DraftLayers))
	}
	f.engineSpec(&spec, eng)
	return spec
}

// engineSpec sets the engine and its per-role settings into spec (a
// tokenspeed spec is left as it is: its roles share spec.tokensPerPage).
func (f *Flags) engineSpec(spec *pdv1.PDPairSpec, eng engine.Engine) {
	if eng.Name() == string(pdv1.EngineTokenspeed) {
		return
	}
	spec.Engine = &pdv1.EngineSpec{Name: pdv1.EngineName(eng.Name()), KVConnector: pdv1.KVConnector(f.KVConnector)}
	spec.TokensPerPage, spec.MLAL15Cache = nil, false
	spec.Prefill.TokensPerPage = ptr.To(int32(or(f.PrefillTokensPerPage, f.TokensPerPage)))
	spec.Decode.TokensPerPage = ptr.To(int32(or(f.DecodeTokensPerPage, f.TokensPerPage)))
	spec.Prefill.KVCacheLayout = pdv1.KVCacheLayout(orString(f.PrefillKVCacheLayout, f.KVCacheLayout))
	spec.Decode.KVCacheLayout = pdv1.KVCacheLayout(orString(f.DecodeKVCacheLayout, f.KVCacheLayout))
	if f.PrefillPP > 0 {
		spec.Prefill.PipelineParallelSize = ptr.To(int32(f.PrefillPP))
	}
	if f.DecodePP > 0 {
		spec.Decode.PipelineParallelSize = ptr.To(int32(f.DecodePP))
	}
	if spec.Model != nil {
		spec.Model.DraftLayers = nil
	}
}

// DescribeEngine says the engine settings for a table's header.
func (f *Flags) DescribeEngine(eng engine.Engine, spec pdv1.PDPairSpec) string {
	if spec.Engine == nil {
		return "engine " + eng.Name()
	}
	s := fmt.Sprintf("engine %s (%s), page %d → %d", eng.Name(), spec.KVConnectorOrDefault(),
		spec.RoleTokensPerPage(spec.Prefill), spec.RoleTokensPerPage(spec.Decode))
	if l := spec.Prefill.KVCacheLayout + spec.Decode.KVCacheLayout; l != "" {
		s += fmt.Sprintf(", layout %s → %s", orString(string(spec.Prefill.KVCacheLayout), "HND"), orString(string(spec.Decode.KVCacheLayout), "HND"))
	}
	if spec.Prefill.PipelineParallelSize != nil || spec.Decode.PipelineParallelSize != nil {
		s += fmt.Sprintf(", PP %d → %d", spec.Prefill.PipelineParallel(), spec.Decode.PipelineParallel())
	}
	return s
}

func or(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orString(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
