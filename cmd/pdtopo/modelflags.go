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

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// modelFlags are the flags `pair` and `advise` share: the model's config
// and what the engines run it with, besides the TP and DP sizes.
type modelFlags struct {
	hfConfig      string
	tokensPerPage int
	kvCacheDtype  string
	prefillDtype  string
	decodeDtype   string
	draftLayers   int
	mlaL15Cache   bool
}

func (f *modelFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.hfConfig, "hf-config", "", "the model's Hugging Face config.json (required)")
	fs.IntVar(&f.tokensPerPage, "tokens-per-page", 1, "tokens per KV page, the engines' --block-size")
	fs.StringVar(&f.kvCacheDtype, "kv-cache-dtype", "", "the engines' --kv-cache-dtype (required): "+strings.Join(modelgeom.KVCacheDtypeNames(), ", "))
	fs.StringVar(&f.prefillDtype, "prefill-kv-cache-dtype", "", "the prefill fleet's KV cache dtype when it differs from --kv-cache-dtype")
	fs.StringVar(&f.decodeDtype, "decode-kv-cache-dtype", "", "the decode fleet's KV cache dtype when it differs from --kv-cache-dtype")
	fs.IntVar(&f.draftLayers, "draft-layers", -1, "layers of the MTP draft model the engines run (default: the config's mtp_num_hidden_layers or num_nextn_predict_layers; 0: no draft model)")
	fs.BoolVar(&f.mlaL15Cache, "mla-l15-cache", false, "the prefill runs the MLA L1.5 cache (MLA models)")
}

// model reads and parses --hf-config and checks the shared flags; config is
// the file's bytes.
func (f *modelFlags) model() (*modelgeom.Model, []byte, error) {
	switch {
	case f.hfConfig == "":
		return nil, nil, usageErrorf("--hf-config is required: the model's config.json")
	case f.kvCacheDtype == "":
		return nil, nil, usageErrorf("--kv-cache-dtype is required: the engines' KV cache dtype (%s)", strings.Join(modelgeom.KVCacheDtypeNames(), ", "))
	case f.tokensPerPage < 1 || f.tokensPerPage > modelgeom.MaxTokensPerPage:
		return nil, nil, usageErrorf("--tokens-per-page must be from 1 to %d, got %d", modelgeom.MaxTokensPerPage, f.tokensPerPage)
	case f.draftLayers < -1 || f.draftLayers > modelgeom.MaxLayers:
		return nil, nil, usageErrorf("--draft-layers must be from 0 to %d, got %d", modelgeom.MaxLayers, f.draftLayers)
	}
	for _, d := range []struct{ flag, value string }{{"--kv-cache-dtype", f.kvCacheDtype}, {"--prefill-kv-cache-dtype", f.prefillDtype}, {"--decode-kv-cache-dtype", f.decodeDtype}} {
		if d.value == "" {
			continue
		}
		if _, err := modelgeom.ParseKVCacheDtype(d.value); err != nil {
			return nil, nil, usageErrorf("%s: %s", d.flag, err.(*modelgeom.Error).Message())
		}
	}
	config, err := readHFConfig(f.hfConfig)
	if err != nil {
		return nil, nil, err
	}
	m, err := modelgeom.ParseConfig(config)
	if err != nil {
		return nil, nil, usageErrorf("--hf-config %s: %s: %s", f.hfConfig, err.(*modelgeom.Error).Reason, err.(*modelgeom.Error).Message())
	}
	return m, config, nil
}

// options are the derivation's inputs for one layout.
func (f *modelFlags) options(prefillTP, prefillDP, decodeTP, decodeDP int) modelgeom.Options {
	o := modelgeom.Options{KVCacheDtype: f.kvCacheDtype, TokensPerPage: f.tokensPerPage,
		Prefill: modelgeom.Role{TP: prefillTP, DP: prefillDP, KVCacheDtype: f.prefillDtype},
		Decode:  modelgeom.Role{TP: decodeTP, DP: decodeDP, KVCacheDtype: f.decodeDtype}}
	if f.draftLayers >= 0 {
		n := f.draftLayers
		o.DraftLayers = &n
	}
	return o
}

// checkRole refuses TP and DP sizes no PDPair may have.
func checkRole(role string, tp, dp int) error {
	switch {
	case tp < 1 || tp > 4096:
		return usageErrorf("--%s-tp must be from 1 to 4096, got %d", role, tp)
	case dp < 1 || dp > tp || tp%dp != 0:
		return usageErrorf("--%s-dp %d must divide --%s-tp %d", role, dp, role, tp)
	}
	return nil
}

func describeDtypes(f *modelFlags) string {
	s := fmt.Sprintf("KV cache %s", f.kvCacheDtype)
	if f.prefillDtype != "" {
		s += ", prefill " + f.prefillDtype
	}
	if f.decodeDtype != "" {
		s += ", decode " + f.decodeDtype
	}
	return fmt.Sprintf("%s, %d token(s) per page", s, f.tokensPerPage)
}
