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

// Package modelflags are the flags pair and advise share: a model's
// config.json and what the engines run it with, besides the TP and DP sizes.
package modelflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// Flags are the flags `pair` and `advise` share: the model's config
// and what the engines run it with, besides the TP and DP sizes.
type Flags struct {
	EngineFlags
	HFConfig      string
	TokensPerPage int
	KVCacheDtype  string
	PrefillDtype  string
	DecodeDtype   string
	DraftLayers   int
	MLAL15Cache   bool
}

// Add registers the flags on fs.
func (f *Flags) Add(fs *pflag.FlagSet) {
	fs.StringVar(&f.HFConfig, "hf-config", "", "the model's Hugging Face config.json (required)")
	fs.IntVar(&f.TokensPerPage, "tokens-per-page", 1, "tokens per KV page, the engines' --block-size")
	fs.StringVar(&f.KVCacheDtype, "kv-cache-dtype", "", "the engines' --kv-cache-dtype (required): "+strings.Join(modelgeom.KVCacheDtypeNames(), ", "))
	fs.StringVar(&f.PrefillDtype, "prefill-kv-cache-dtype", "", "the prefill fleet's KV cache dtype when it differs from --kv-cache-dtype")
	fs.StringVar(&f.DecodeDtype, "decode-kv-cache-dtype", "", "the decode fleet's KV cache dtype when it differs from --kv-cache-dtype")
	fs.IntVar(&f.DraftLayers, "draft-layers", -1, "layers of the MTP draft model the engines run (default: the config's mtp_num_hidden_layers or num_nextn_predict_layers; 0: no draft model)")
	fs.BoolVar(&f.MLAL15Cache, "mla-l15-cache", false, "the prefill runs the MLA L1.5 cache (MLA models)")
	f.AddEngine(fs)
}

// Model reads and parses --hf-config and checks the shared flags; config is
// the file's bytes.
func (f *Flags) Model() (*modelgeom.Model, []byte, error) {
	switch {
	case f.HFConfig == "":
		return nil, nil, cli.UsageErrorf("--hf-config is required: the model's config.json")
	case f.KVCacheDtype == "":
		return nil, nil, cli.UsageErrorf("--kv-cache-dtype is required: the engines' KV cache dtype (%s)", strings.Join(modelgeom.KVCacheDtypeNames(), ", "))
	case f.TokensPerPage < 1 || f.TokensPerPage > modelgeom.MaxTokensPerPage:
		return nil, nil, cli.UsageErrorf("--tokens-per-page must be from 1 to %d, got %d", modelgeom.MaxTokensPerPage, f.TokensPerPage)
	case f.DraftLayers < -1 || f.DraftLayers > modelgeom.MaxLayers:
		return nil, nil, cli.UsageErrorf("--draft-layers must be from 0 to %d, got %d", modelgeom.MaxLayers, f.DraftLayers)
	}
	for _, d := range []struct{ flag, value string }{{"--kv-cache-dtype", f.KVCacheDtype}, {"--prefill-kv-cache-dtype", f.PrefillDtype}, {"--decode-kv-cache-dtype", f.DecodeDtype}} {
		if d.value == "" {
			continue
		}
		if _, err := modelgeom.ParseKVCacheDtype(d.value); err != nil && !f.literalDtype(d.value) {
			return nil, nil, cli.UsageErrorf("%s: %s", d.flag, err.(*modelgeom.Error).Message())
		}
	}
	config, err := cli.ReadHFConfig(f.HFConfig)
	if err != nil {
		return nil, nil, err
	}
	parse := modelgeom.ParseConfig
	if f.Engine != "" && f.Engine != string(pdv1.EngineTokenspeed) {
		// The other engines' rules need the attention shape only, also of
		// architectures whose pools tokenspeed's derivation does not model.
		parse = modelgeom.ParseShape
	}
	m, err := parse(config)
	if err != nil {
		return nil, nil, cli.UsageErrorf("--hf-config %s: %s: %s", f.HFConfig, err.(*modelgeom.Error).Reason, err.(*modelgeom.Error).Message())
	}
	return m, config, nil
}

// literalDtypes are the --kv-cache-dtype strings vLLM and SGLang take that
// tokenspeed does not store (the API's KVCacheDtype enum holds them).
var literalDtypes = []string{"fp8_inc", "fp8_ds_mla", "fp4_e2m1"}

// literalDtype reports whether d is a dtype string an engine other than
// tokenspeed takes: those engines compare the strings, pdtopo does not
// size their caches.
func (f *Flags) literalDtype(d string) bool {
	return f.Engine != "" && f.Engine != string(pdv1.EngineTokenspeed) && slices.Contains(literalDtypes, d)
}

// Options are the derivation's inputs for one layout.
func (f *Flags) Options(prefillTP, prefillDP, decodeTP, decodeDP int) modelgeom.Options {
	o := modelgeom.Options{KVCacheDtype: f.KVCacheDtype, TokensPerPage: f.TokensPerPage,
		Prefill: modelgeom.Role{TP: prefillTP, DP: prefillDP, KVCacheDtype: f.PrefillDtype},
		Decode:  modelgeom.Role{TP: decodeTP, DP: decodeDP, KVCacheDtype: f.DecodeDtype}}
	if f.DraftLayers >= 0 {
		n := f.DraftLayers
		o.DraftLayers = &n
	}
	return o
}

// CheckRole refuses TP and DP sizes no PDPair may have.
func CheckRole(role string, tp, dp int) error {
	switch {
	case tp < 1 || tp > 4096:
		return cli.UsageErrorf("--%s-tp must be from 1 to 4096, got %d", role, tp)
	case dp < 1 || dp > tp || tp%dp != 0:
		return cli.UsageErrorf("--%s-dp %d must divide --%s-tp %d", role, dp, role, tp)
	}
	return nil
}

// DescribeDtypes says what the engines store the KV cache as, and the page size.
func (f *Flags) DescribeDtypes() string {
	s := fmt.Sprintf("KV cache %s", f.KVCacheDtype)
	if f.PrefillDtype != "" {
		s += ", prefill " + f.PrefillDtype
	}
	if f.DecodeDtype != "" {
		s += ", decode " + f.DecodeDtype
	}
	return fmt.Sprintf("%s, %d token(s) per page", s, f.TokensPerPage)
}
