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
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// The operator reports the verdict of the pair's own engine in status: a
// compatible vLLM and SGLang pair, and one each that the engine's rules
// refuse, with the rule's reason and a message ending with the fix. No plan
// ConfigMaps are published for either: the engines move the bytes.
func TestTheOperatorReportsTheEnginesVerdict(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name   string
		pair   *pdv1.PDPair
		reason pdv1.PDPairConditionReason
		says   string
		// reads is status.rankMap.reads: vLLM's and SGLang's mapping of
		// decode TP 2 onto prefill TP 4 (each decode rank reads the two
		// prefill ranks whose heads it holds); none for a refused pair.
		reads []string
	}{
		{"vllm-p4-d2", enginePair(ns, "vllm-p4-d2", vllmEngine).Obj(), pdv1.ReasonCompatible, "vLLM NixlConnector serves prefill TP 4 → decode TP 2",
			[]string{"decode 0 reads prefill 0-1", "decode 1 reads prefill 2-3"}},
		{"vllm-dtype-strings", enginePair(ns, "vllm-dtype-strings", vllmEngine).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.KVCacheDtype, p.Spec.Decode.KVCacheDtype = "auto", "bfloat16"
		}).Obj(), pdv1.ReasonKVCacheDtypeMismatch, "Fix: pass the same --kv-cache-dtype string on both roles", nil},
		{"vllm-versions", enginePair(ns, "vllm-versions", vllmEngine).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.EngineVersion, p.Spec.Decode.EngineVersion = "0.10.2", "0.11.0"
		}).Obj(), pdv1.ReasonEngineVersionMismatch, "prefill runs vLLM 0.10.2, decode vLLM 0.11.0: NixlConnector hashes vllm.__version__ into its handshake (compute_nixl_compatibility_hash)", nil},
		{"sglang-p4-d2", enginePair(ns, "sglang-p4-d2", sglangEngine).Obj(), pdv1.ReasonCompatible, "SGLang (mooncake) serves prefill TP 4 DP 1 → decode TP 2 DP 1",
			[]string{"decode 0 reads prefill 0-1", "decode 1 reads prefill 2-3"}},
		{"sglang-page-sizes", enginePair(ns, "sglang-page-sizes", sglangEngine).Edit(func(p *pdv1.PDPair) {
			p.Spec.Prefill.TokensPerPage, p.Spec.Decode.TokensPerPage = ptr.To[int32](16), ptr.To[int32](64)
		}).Obj(), pdv1.ReasonPageSizeMismatch, "Fix:", nil},
	}
	for _, c := range cases {
		create(t, c.pair)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := waitObserved(t, c.pair)
			cond := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
			want := metav1.ConditionFalse
			if c.reason == pdv1.ReasonCompatible {
				want = metav1.ConditionTrue
			}
			if cond == nil || cond.Status != want || cond.Reason != string(c.reason) || !strings.Contains(cond.Message, c.says) {
				t.Fatalf("LayoutCompatible = %+v; want %s %s saying %q", cond, want, c.reason, c.says)
			}
			if want := c.reads; !slices.Equal(rankMapReads(got), want) {
				t.Errorf("status.rankMap.reads = %q, want %q", rankMapReads(got), want)
			}
			if n := len(planConfigMaps(t, got)); n != 0 {
				t.Errorf("%d plan ConfigMaps published for an engine that loads none", n)
			}
			if ready := meta.IsStatusConditionTrue(got.Status.Conditions, string(pdv1.PDPairReady)); ready != (want == metav1.ConditionTrue) {
				t.Errorf("Ready %v for LayoutCompatible %s", ready, want)
			}
		})
	}
}

// rankMapReads is status.rankMap.reads, nil without a rank map.
func rankMapReads(p *pdv1.PDPair) []string {
	if p.Status.RankMap == nil {
		return nil
	}
	return p.Status.RankMap.Reads
}
