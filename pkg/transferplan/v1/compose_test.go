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

package v1

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// The cross pair of P8×D4 and P4×D2 (an 8-head GQA model: a TP t rank
// holds 8/t heads) is planned as if the pair had been described at P8×D2:
// its prefill side from the P8 set, its decode side from the D2 set. The
// expectation is the builder's own P8×D2 layout, made from the model's
// heads, not from either record.
func TestComposeCross(t *testing.T) {
	gqa := func(p, d int) Layout {
		return mha(p, d).heads(4, 8, 256).state(2, int64(64*8/d), int64(64*8/p), 64).build()
	}
	got, err := ComposeCross(gqa(8, 4).Record(), gqa(4, 2).Record())
	if err != nil {
		t.Fatal(err)
	}
	if want := gqa(8, 2).Record(); !reflect.DeepEqual(got.Record(), want) {
		t.Fatalf("composed %+v\nwant     %+v", got.Record(), want)
	}
	// the other way round: P4 prefill from the P4×D2 set, D4 from P8×D4
	got, err = ComposeCross(gqa(4, 2).Record(), gqa(8, 4).Record())
	if err != nil || !reflect.DeepEqual(got.Record(), gqa(4, 4).Record()) {
		t.Fatalf("composed %+v, %v; want the P4×D4 layout", got.Record(), err)
	}
	planned, err := Plan(got)
	if err != nil || len(planned.Plans) != 4 {
		t.Fatalf("planning the composed layout: %v", err)
	}
}

// Generations that differ in more than their parallelism are refused,
// naming what differs, never composed.
func TestComposeCrossRefusesOtherCaches(t *testing.T) {
	base := func() *layoutBuilder { return mha(8, 4).heads(4, 8, 256) }
	cases := []struct {
		name, field string
		decode      Layout
		says        []string
	}{
		{"attention backend", "attentionBackend", mla(4, 2).kv(transferplan.TargetK, 8, 512, 256).build(), []string{"attention backend MHA", "MLA"}},
		{"tokens per page", "tokensPerPage", mha(4, 2).tokensPerPage(4).heads(4, 8, 256).build(), []string{"tokensPerPage 1", "4"}},
		{"buffer count", "kvBuffers", mha(4, 2).heads(6, 8, 256).build(), []string{"KV buffers 8 (4 target_k, 4 target_v)", "has 12 (6 target_k, 6 target_v)"}},
		{"buffer kinds", "kvBuffers", mha(4, 2).kv(transferplan.TargetK, 4, 512, 256).kv(transferplan.DraftK, 4, 512, 256).build(), []string{"4 draft_k"}},
		{"state buffers", "stateBuffers", mha(4, 2).heads(4, 8, 256).state(1, 64, 64, 64).build(), []string{"state buffers 0", "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ComposeCross(base().build().Record(), tc.decode.Record())
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason != transferplan.ReasonInvalidLayout || le.Field != tc.field {
				t.Fatalf("got %v, want InvalidLayout on %s", err, tc.field)
			}
			for _, s := range append(tc.says, "prefill TP 8 DP 1", "decode TP 2 DP 1", "differ in more than their layouts") {
				if !strings.Contains(le.Message, s) {
					t.Errorf("message %q does not say %q", le.Message, s)
				}
			}
		})
	}
}
