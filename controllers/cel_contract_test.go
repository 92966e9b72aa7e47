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

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// contractPair is a PDPair on the cache-contract wire with only what such a
// pair needs: the wire, the contracts and each role's TP size. A nil
// source leaves the role's contract to the live engines.
func contractPair(ns, name string, prefill, decode *pdv1.CacheContractSource) *pdv1.PDPair {
	p := &pdv1.PDPair{}
	p.Namespace, p.Name = ns, name
	p.Spec.Wire = pdv1.WireCacheContract
	p.Spec.Prefill.TensorParallelSize, p.Spec.Decode.TensorParallelSize = 4, 1
	if prefill != nil || decode != nil {
		p.Spec.CacheContracts = &pdv1.CacheContracts{Prefill: prefill, Decode: decode}
	}
	return p
}

func inline(s string) *pdv1.CacheContractSource { return &pdv1.CacheContractSource{Inline: s} }

func fromConfigMap(name, key string) *pdv1.CacheContractSource {
	return &pdv1.CacheContractSource{ConfigMapKeyRef: &pdv1.ConfigMapKeyReference{Name: name, Key: key}}
}

func TestAPIServerRulesOfContractPairs(t *testing.T) {
	ns := newNamespace(t)
	ok := contractPair(ns, "ok", inline(`{"plan":{}}`), fromConfigMap("decode-contract", "contract.json"))
	create(t, ok) // no attentionBackend, kvBuffers or tokensPerPage needed
	if ok.Spec.Wire != pdv1.WireCacheContract || ok.Spec.CacheContracts.Decode.ConfigMapKeyRef.Key != "contract.json" {
		t.Fatalf("stored spec %+v", ok.Spec)
	}
	live := contractPair(ns, "live", nil, nil) // both contracts from the live engines
	live.Spec.Prefill.BootstrapAddress = "prefill.llm.svc:8998"
	create(t, live)
	mixed := contractPair(ns, "mixed", inline(`{"plan":{}}`), nil) // the decode's from its agents
	create(t, mixed)
	v1 := fixtures.Pair(ns, "v1").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, v1)
	if v1.Spec.Wire != pdv1.WireV1 {
		t.Fatalf("the wire defaults to %q, want V1", v1.Spec.Wire)
	}

	for _, c := range []struct {
		name  string
		pair  *pdv1.PDPair
		field string
		says  string
	}{
		{"contract wire without contracts or a bootstrap address", contractPair(ns, "a", nil, nil),
			"spec.prefill.bootstrapAddress", "wire CacheContract needs the prefill's contract: give cacheContracts.prefill, or prefill.bootstrapAddress"},
		{"the decode's contract only, without a bootstrap address", contractPair(ns, "a", nil, inline("{}")),
			"spec.prefill.bootstrapAddress", "wire CacheContract needs the prefill's contract"},
		{"empty cacheContracts", func() *pdv1.PDPair {
			p := contractPair(ns, "a", nil, nil)
			p.Spec.Prefill.BootstrapAddress = "prefill.llm.svc:8998"
			p.Spec.CacheContracts = &pdv1.CacheContracts{}
			return p
		}(), "spec.cacheContracts", "leave cacheContracts out to read both contracts from the live engines"},
		{"contracts on the V1 wire", func() *pdv1.PDPair {
			p := fixtures.Pair(ns, "a").Spec(fixtures.Llama70B(8, 4)).Obj()
			p.Spec.CacheContracts = &pdv1.CacheContracts{Prefill: inline("{}"), Decode: inline("{}")}
			return p
		}(), "spec.cacheContracts", "cacheContracts are only read on wire CacheContract"},
		{"V1 wire without kvBuffers", func() *pdv1.PDPair {
			p := contractPair(ns, "a", inline("{}"), inline("{}"))
			p.Spec.Wire, p.Spec.CacheContracts = pdv1.WireV1, nil
			return p
		}(), "spec.kvBuffers", "give the model (spec.model with kvCacheDtype) or its KV buffers"},
		{"contract wire with kvBuffers", func() *pdv1.PDPair {
			p := contractPair(ns, "a", inline("{}"), inline("{}"))
			p.Spec.KVBuffers = fixtures.Pair(ns, "a").Spec(fixtures.Llama70B(8, 4)).Obj().Spec.KVBuffers
			return p
		}(), "spec.wire", "on wire CacheContract the layout is the two contracts"},
		{"unknown wire", func() *pdv1.PDPair {
			p := contractPair(ns, "a", inline("{}"), inline("{}"))
			p.Spec.Wire = "V2"
			return p
		}(), "spec.wire", "Unsupported value"},
		{"inline and configMapKeyRef", contractPair(ns, "a", &pdv1.CacheContractSource{Inline: "{}", ConfigMapKeyRef: &pdv1.ConfigMapKeyReference{Name: "c", Key: "k"}}, inline("{}")),
			"spec.cacheContracts.prefill", "give exactly one of inline and configMapKeyRef"},
		{"neither", contractPair(ns, "a", inline("{}"), &pdv1.CacheContractSource{}), "spec.cacheContracts.decode", "give exactly one of inline and configMapKeyRef"},
		{"inline past 256 KiB", contractPair(ns, "a", inline(strings.Repeat(" ", 256<<10+1)), inline("{}")), "spec.cacheContracts.prefill.inline", "Too long"},
		{"a key that is not a ConfigMap key", contractPair(ns, "a", inline("{}"), fromConfigMap("c", "a/b")), "spec.cacheContracts.decode.configMapKeyRef.key", "should match"},
		{"a ConfigMap without a name", contractPair(ns, "a", inline("{}"), fromConfigMap("", "k")), "spec.cacheContracts.decode.configMapKeyRef.name", "at least 1 chars long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), c.pair)
			if err == nil {
				t.Fatalf("the API server accepted %s", c.name)
			}
			assertInvalidField(t, err, c.field, c.says)
		})
	}
}
