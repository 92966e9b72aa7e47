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
	"errors"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

func TestLoadEngineRankMapsDecodeDP(t *testing.T) {
	l := planv1.Layout{
		Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: 8, DPSize: 1},
		Decode:  transferplan.Parallelism{TPSize: 8, DPSize: 2}, // 4 TP ranks per DP group
	}
	for _, kind := range []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV} {
		l.KVBuffers = append(l.KVBuffers, planv1.BufferSpec{Kind: kind, PrefillItemBytes: 128, DecodeItemBytes: 256, PrefillUnitBytes: 128, DecodeUnitBytes: 128})
	}
	set, err := planv1.Plan(l)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := Encode("pair", set)
	if err != nil {
		t.Fatal(err)
	}
	plan, layout, hash, err := LoadEngineRank(objects, 6)
	if err != nil {
		t.Fatal(err)
	}
	if plan.DecodeTPRank != 2 || layout.Decode.DPSize != 2 || hash != set.Hash() {
		t.Fatalf("engine rank 6 loaded decode TP rank %d (want 2), layout %+v, hash %s", plan.DecodeTPRank, layout.Decode, hash)
	}
	for _, bad := range []int{-1, 8} {
		if _, _, _, err := LoadEngineRank(objects, bad); err == nil {
			t.Fatalf("engine rank %d of 8 loaded", bad)
		} else if fe := (*FormatError)(nil); !errors.As(err, &fe) || fe.Reason != ReasonRankOutOfRange {
			t.Fatalf("engine rank %d: %v", bad, err)
		}
	}
}
