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

package planstore

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// kvLayout is an MHA layout with layers target K/V buffer pairs of the given
// per-rank item bytes and a unit of unit bytes.
func kvLayout(prefillTP, decodeTP, layers int, prefillItem, decodeItem, unit int64) planv1.Layout {
	l := planv1.Layout{
		Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: prefillTP, DPSize: 1},
		Decode:  transferplan.Parallelism{TPSize: decodeTP, DPSize: 1},
	}
	for _, kind := range []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV} {
		for range layers {
			l.KVBuffers = append(l.KVBuffers, planv1.BufferSpec{
				Kind: kind, PrefillItemBytes: prefillItem, DecodeItemBytes: decodeItem,
				PrefillUnitBytes: unit, DecodeUnitBytes: unit,
			})
		}
	}
	return l
}

func mustPlan(t testing.TB, l planv1.Layout) *transferplan.PlanSet {
	t.Helper()
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatalf("planning: %v", err)
	}
	return set
}

func mustEncode(t testing.TB, name string, set *transferplan.PlanSet) []Object {
	t.Helper()
	objs, err := Encode(name, set)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return objs
}

// gqaP8D4 is a GQA layout, prefill TP 8 → decode TP 4, 80 layers: every decode
// rank pulls from two prefill ranks.
func gqaP8D4(t testing.TB) *transferplan.PlanSet {
	return mustPlan(t, kvLayout(8, 4, 80, 128, 256, 128))
}

// p512D1024 is 1024 decode ranks with 400 buffers (200 layers): a decode rank
// holds half of a prefill rank's heads.
func p512D1024(t testing.TB) *transferplan.PlanSet {
	return mustPlan(t, kvLayout(512, 1024, 200, 256, 128, 64))
}
