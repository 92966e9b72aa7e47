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
	"errors"
	"reflect"
	"strings"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

func baseSpec() pdv1.PDPairSpec {
	return pdv1.PDPairSpec{
		Prefill: pdv1.FleetLayout{TensorParallelSize: 8, DataParallelSize: i32(2)},
		Decode:  pdv1.FleetLayout{TensorParallelSize: 2},
		KVBuffers: []pdv1.KVBufferGroup{
			{Kind: pdv1.KVTargetK, BufferGeometry: pdv1.BufferGeometry{Count: 2, DecodeItemBytes: 1024, DecodeUnitBytes: i64(256), PrefillUnitBytes: i64(256)}},
			{Kind: pdv1.KVTargetV, BufferGeometry: pdv1.BufferGeometry{Count: 2, DecodeItemBytes: 1024, PrefillItemBytes: i64(512), DecodeUnitBytes: i64(256), PrefillUnitBytes: i64(256)}},
		},
		StateBuffers: []pdv1.StateBufferGroup{{BufferGeometry: pdv1.BufferGeometry{Count: 1, DecodeItemBytes: 64}}},
	}
}

func TestFromSpecDefaultsAndExpansion(t *testing.T) {
	l, err := FromSpec(baseSpec())
	if err != nil {
		t.Fatal(err)
	}
	if l.Attention != transferplan.MHA || l.TokensPerPage != 1 || l.Decode.DPSize != 1 || l.Prefill.TPPerDP() != 4 {
		t.Errorf("defaults: %+v", l)
	}
	// TargetK's prefill item defaults to 1024 × D2 / P4 (per-DP sizes) = 512.
	wantK := planv1.BufferSpec{Kind: transferplan.TargetK, Field: "kvBuffers[0]", DecodeItemBytes: 1024, PrefillItemBytes: 512, DecodeUnitBytes: 256, PrefillUnitBytes: 256}
	wantV := wantK
	wantV.Kind, wantV.Field = transferplan.TargetV, "kvBuffers[1]"
	if !reflect.DeepEqual(l.KVBuffers, []planv1.BufferSpec{wantK, wantK, wantV, wantV}) {
		t.Errorf("KV buffers in pointer order: %+v", l.KVBuffers)
	}
	wantState := planv1.BufferSpec{Kind: transferplan.MambaState, Field: "stateBuffers[0]", DecodeItemBytes: 64, PrefillItemBytes: 32, DecodeUnitBytes: 1, PrefillUnitBytes: 1}
	if !reflect.DeepEqual(l.StateBuffers, []planv1.BufferSpec{wantState}) {
		t.Errorf("state buffers: %+v", l.StateBuffers)
	}
}

func TestFromSpecRejects(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*pdv1.PDPairSpec)
		field   string
		mention string
	}{
		{"unknown kind", func(s *pdv1.PDPairSpec) { s.KVBuffers[0].Kind = "TargetQ" }, "kvBuffers[0].kind", `"TargetQ"`},
		{"zero count", func(s *pdv1.PDPairSpec) { s.KVBuffers[1].Count = 0 }, "kvBuffers[1].count", "got 0"},
		{"default prefill item rounds to 0", func(s *pdv1.PDPairSpec) { s.StateBuffers[0].DecodeItemBytes = 1 }, "stateBuffers[0].prefillItemBytes", "1×2/4 is 0"},
		{"negative decode item", func(s *pdv1.PDPairSpec) { s.KVBuffers[0].DecodeItemBytes = -5 }, "kvBuffers[0].decodeItemBytes", "got -5"},
		{"too many buffers", func(s *pdv1.PDPairSpec) { s.KVBuffers[0].Count = 1 << 30 }, "kvBuffers", "at most 16384"},
		{"dp does not divide", func(s *pdv1.PDPairSpec) { s.Prefill.DataParallelSize = i32(3) }, "prefill.dataParallelSize", "3 does not divide tensorParallelSize 8"},
		{"unknown backend", func(s *pdv1.PDPairSpec) { s.AttentionBackend = "GQA" }, "attentionBackend", `"GQA"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := baseSpec()
			tc.mutate(&spec)
			_, err := FromSpec(spec)
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason != transferplan.ReasonInvalidLayout || le.Field != tc.field || !strings.Contains(le.Message, tc.mention) {
				t.Fatalf("got %v (field %q), want InvalidLayout on %s mentioning %q", err, fieldOf(le), tc.field, tc.mention)
			}
		})
	}
}

func fieldOf(le *transferplan.LayoutError) string {
	if le == nil {
		return ""
	}
	return le.Field
}

// People read a buffer kind as the PDPair spells it: every kvBuffers kind
// maps to a wire kind whose SpecName is that kind, back again.
func TestSpecNamesAreTheCRDKinds(t *testing.T) {
	if len(wireKind) != 4 {
		t.Fatalf("%d kvBuffers kinds, want TargetK, TargetV, DraftK, DraftV", len(wireKind))
	}
	for crd, wire := range wireKind {
		if got := wire.SpecName(); got != string(crd) {
			t.Errorf("%s.SpecName() = %q, want the CRD's %q", wire, got, crd)
		}
	}
}
