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
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// Every structural rule of the CRD, broken once, through the real API server:
// the object is rejected, and the error names the field.
func TestAPIServerRejectsBrokenPDPairs(t *testing.T) {
	ns := newNamespace(t)
	good := func(name string) *fixtures.PairBuilder { return fixtures.Pair(ns, name).Spec(fixtures.Llama70B(8, 4)) }
	cases := []struct {
		name  string
		pair  *pdv1.PDPair
		field string
		says  string
	}{
		{"prefill TP 0", good("a").Prefill(0, 1).Obj(), "spec.prefill.tensorParallelSize", "greater than or equal to 1"},
		{"decode TP 0", good("a").Decode(0, 1).Obj(), "spec.decode.tensorParallelSize", "greater than or equal to 1"},
		{"decode DP 0", good("a").Decode(4, 0).Obj(), "spec.decode.dataParallelSize", "greater than or equal to 1"},
		{"prefill DP 3 does not divide TP 8", good("a").Prefill(8, 3).Obj(), "spec.prefill.dataParallelSize", "dataParallelSize must divide tensorParallelSize"},
		{"decode DP 8 does not divide TP 4", good("a").Decode(4, 8).Obj(), "spec.decode.dataParallelSize", "dataParallelSize must divide tensorParallelSize"},
		{"tokensPerPage 0", good("a").TokensPerPage(0).Obj(), "spec.tokensPerPage", "greater than or equal to 1"},
		{"no KV buffer groups", fixtures.Pair(ns, "a").Prefill(8, 1).Decode(4, 1).Edit(func(p *pdv1.PDPair) { p.Spec.KVBuffers = []pdv1.KVBufferGroup{} }).Obj(), "spec.kvBuffers", "Required value: give the model (spec.model with kvCacheDtype) or its KV buffers"},
		{"KV buffers absent", fixtures.Pair(ns, "a").Prefill(8, 1).Decode(4, 1).Obj(), "spec.kvBuffers", "Required value"},
		{"group count 0", good("a").KV(pdv1.KVDraftK, 0, 512, 256, 256).Obj(), "spec.kvBuffers[2].count", "greater than or equal to 1"},
		{"decode item bytes 0", good("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVBuffers[1].DecodeItemBytes = 0 }).Obj(), "spec.kvBuffers[1].decodeItemBytes", "greater than or equal to 1"},
		{"prefill item bytes 0", good("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].PrefillItemBytes = ptr.To[int64](0) }).Obj(), "spec.kvBuffers[0].prefillItemBytes", "greater than or equal to 1"},
		{"decode unit bytes -1", good("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVBuffers[0].DecodeUnitBytes = ptr.To[int64](-1) }).Obj(), "spec.kvBuffers[0].decodeUnitBytes", "greater than or equal to 1"},
		{"prefill unit bytes 0", good("a").Edit(func(p *pdv1.PDPair) { p.Spec.KVBuffers[1].PrefillUnitBytes = ptr.To[int64](0) }).Obj(), "spec.kvBuffers[1].prefillUnitBytes", "greater than or equal to 1"},
		{"state item bytes 0", good("a").State(fixtures.Geometry(4, 0, 64, 1, 1)).Obj(), "spec.stateBuffers[0].decodeItemBytes", "greater than or equal to 1"},
		{"unknown buffer kind", good("a").KV("TargetQ", 1, 512, 256, 256).Obj(), "spec.kvBuffers[2].kind", "Unsupported value"},
		{"unknown attention backend", good("a").Backend("GQA").Obj(), "spec.attentionBackend", "Unsupported value"},
		{"MHA with 80 TargetK and 79 TargetV", fixtures.Pair(ns, "a").Prefill(8, 1).Decode(4, 1).KV(pdv1.KVTargetK, 80, 512, 256, 256).KV(pdv1.KVTargetV, 79, 512, 256, 256).Obj(),
			"spec.kvBuffers", "TargetK counts of all groups must add up to the TargetV counts"},
		{"MHA K/V counts summed over groups", good("a").KV(pdv1.KVTargetK, 2, 512, 256, 256).KV(pdv1.KVTargetV, 1, 512, 256, 256).Obj(),
			"spec.kvBuffers", "TargetK counts of all groups must add up to the TargetV counts"},
		{"MHA with a DraftK but no DraftV", good("a").KV(pdv1.KVDraftK, 1, 512, 256, 256).Obj(), "spec.kvBuffers", "DraftK counts of all groups must add up to the DraftV counts"},
		{"more than 16384 KV buffers", good("a").KVPair(4096, 512, 256, 256).KVPair(4096, 512, 256, 256).Obj(), "spec.kvBuffers", "at most 16384 buffers"},
		{"more than 16384 state buffers", good("a").State(fixtures.Geometry(4096, 64, 64, 1, 1)).State(fixtures.Geometry(4096, 64, 64, 1, 1)).State(fixtures.Geometry(4096, 64, 64, 1, 1)).State(fixtures.Geometry(4096, 64, 64, 1, 1)).State(fixtures.Geometry(1, 64, 64, 1, 1)).Obj(),
			"spec.stateBuffers", "at most 16384 buffers"},
		{"L1.5 cache without MLA", good("a").L15().Obj(), "spec.mlaL15Cache", "only supported with attentionBackend MLA"},
		{"name longer than a label value", fixtures.Pair(ns, strings.Repeat("n", 64)).Spec(fixtures.Llama70B(8, 4)).Obj(), rootField, "metadata.name must be at most 63 characters"},
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

// rootField is how the API server names the field of a rule on the object's
// root, which cannot point into metadata; the message names metadata.name.
const rootField = "<nil>"

// assertInvalidField checks that err is an Invalid error with a cause on
// field whose message contains says.
func assertInvalidField(t *testing.T, err error, field, says string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error = %v, want an Invalid error naming %s", err, field)
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == field && strings.Contains(cause.Message, says) {
			return
		}
	}
	t.Fatalf("no cause on field %q saying %q; causes: %+v", field, says, status.Status().Details.Causes)
}

// What the rules allow: MLA has no K/V pairing, and omitted fields default.
func TestAPIServerAcceptsAndDefaults(t *testing.T) {
	ns := newNamespace(t)
	mlaOnlyK := fixtures.Pair(ns, "mla-k-only").MLA().L15().Prefill(8, 1).Decode(4, 1).KV(pdv1.KVTargetK, 61, 1152, 1152, 1152).Obj()
	create(t, mlaOnlyK)

	minimal := &pdv1.PDPair{}
	minimal.Namespace, minimal.Name = ns, "minimal"
	minimal.Spec.Prefill.TensorParallelSize, minimal.Spec.Decode.TensorParallelSize = 2, 2
	minimal.Spec.KVBuffers = []pdv1.KVBufferGroup{{Kind: pdv1.KVTargetK, BufferGeometry: pdv1.BufferGeometry{Count: 1, DecodeItemBytes: 64}},
		{Kind: pdv1.KVTargetV, BufferGeometry: pdv1.BufferGeometry{Count: 1, DecodeItemBytes: 64}}}
	create(t, minimal)
	s := minimal.Spec // Create reads the server's answer back into the object
	if s.AttentionBackend != pdv1.AttentionMHA || ptr.Deref(s.TokensPerPage, 0) != 1 ||
		ptr.Deref(s.Prefill.DataParallelSize, 0) != 1 || ptr.Deref(s.Decode.DataParallelSize, 0) != 1 {
		t.Fatalf("defaults not applied: backend %q tokensPerPage %v prefill DP %v decode DP %v",
			s.AttentionBackend, s.TokensPerPage, s.Prefill.DataParallelSize, s.Decode.DataParallelSize)
	}
}
