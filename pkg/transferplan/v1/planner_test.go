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
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// planAll plans every decode TP rank of l or fails the test.
func planAll(t *testing.T, l Layout) []transferplan.RoutePlan {
	t.Helper()
	set, err := Plan(l)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if !set.Compatible || len(set.Plans) != l.Decode.TPPerDP() {
		t.Fatalf("Plan: compatible=%v with %d plans, want %d", set.Compatible, len(set.Plans), l.Decode.TPPerDP())
	}
	return set.Plans
}

// Small layouts whose every plan is written out in full.
func TestRoutePlansExact(t *testing.T) {
	cases := []struct {
		name   string
		layout Layout
		want   []transferplan.RoutePlan
	}{{
		name: "GQA 6 heads P2→D3: decode rank 1 straddles both prefill ranks",
		// 6 KV heads of 256 bytes: prefill ranks hold 3 heads, decode ranks 2.
		layout: mha(2, 3).kvItems(transferplan.TargetK, 1, 512, 768, 256).kvItems(transferplan.TargetV, 1, 512, 768, 256).build(),
		want: []transferplan.RoutePlan{{
			DecodeTPRank: 0, PlanKind: transferplan.PlanFragmented, TargetTPRanks: []int{0}, RequiredPrefillResponseNum: 1, IdlePrefillTPRanks: []int{},
			Targets: []transferplan.PlanTarget{{PrefillTPRank: 0, RequiredDstInfoNum: 2, Fragments: []transferplan.TransferFragment{
				frag(0, transferplan.TargetK, 0, 0, 768, 512, 0, 0, 512), frag(1, transferplan.TargetV, 0, 0, 768, 512, 0, 0, 512)}}},
		}, {
			DecodeTPRank: 1, PlanKind: transferplan.PlanFragmented, TargetTPRanks: []int{0, 1}, RequiredPrefillResponseNum: 2, IdlePrefillTPRanks: []int{},
			Targets: []transferplan.PlanTarget{
				{PrefillTPRank: 0, RequiredDstInfoNum: 2, Fragments: []transferplan.TransferFragment{
					frag(0, transferplan.TargetK, 0, 1, 768, 512, 512, 0, 256), frag(1, transferplan.TargetV, 0, 1, 768, 512, 512, 0, 256)}},
				{PrefillTPRank: 1, RequiredDstInfoNum: 2, Fragments: []transferplan.TransferFragment{
					frag(0, transferplan.TargetK, 1, 1, 768, 512, 0, 256, 256), frag(1, transferplan.TargetV, 1, 1, 768, 512, 0, 256, 256)}},
			},
		}, {
			DecodeTPRank: 2, PlanKind: transferplan.PlanFragmented, TargetTPRanks: []int{1}, RequiredPrefillResponseNum: 1, IdlePrefillTPRanks: []int{},
			Targets: []transferplan.PlanTarget{{PrefillTPRank: 1, RequiredDstInfoNum: 2, Fragments: []transferplan.TransferFragment{
				frag(0, transferplan.TargetK, 1, 2, 768, 512, 256, 0, 512), frag(1, transferplan.TargetV, 1, 2, 768, 512, 256, 0, 512)}}},
		}},
	}, {
		name:   "identity P2→D2: whole items from the same rank",
		layout: mha(2, 2).kv(transferplan.TargetK, 2, 1024, 256).kv(transferplan.TargetV, 2, 1024, 256).build(),
		want: []transferplan.RoutePlan{
			{DecodeTPRank: 0, PlanKind: transferplan.PlanIdentity, TargetTPRank: intp(0), TargetTPRanks: []int{0}, RequiredPrefillResponseNum: 1,
				SupportsRemoteSpecCandidates: true, IdlePrefillTPRanks: []int{},
				Targets: []transferplan.PlanTarget{{PrefillTPRank: 0, RequiredDstInfoNum: 1, Fragments: []transferplan.TransferFragment{}}}},
			{DecodeTPRank: 1, PlanKind: transferplan.PlanIdentity, TargetTPRank: intp(1), TargetTPRanks: []int{1}, RequiredPrefillResponseNum: 1,
				SupportsRemoteSpecCandidates: true, IdlePrefillTPRanks: []int{},
				Targets: []transferplan.PlanTarget{{PrefillTPRank: 1, RequiredDstInfoNum: 1, Fragments: []transferplan.TransferFragment{}}}},
		},
	}, {
		name: "MQA replicated P4→D2: source d*P/D, idle odd prefill ranks on rank 0",
		// One KV head: every rank on both sides holds it whole.
		layout: mha(4, 2).kvItems(transferplan.TargetK, 1, 256, 256, 256).kvItems(transferplan.TargetV, 1, 256, 256, 256).build(),
		want: []transferplan.RoutePlan{
			{DecodeTPRank: 0, PlanKind: transferplan.PlanFragmented, TargetTPRanks: []int{0}, RequiredPrefillResponseNum: 1, IdlePrefillTPRanks: []int{1, 3},
				Targets: []transferplan.PlanTarget{{PrefillTPRank: 0, RequiredDstInfoNum: 1, Fragments: []transferplan.TransferFragment{
					frag(0, transferplan.TargetK, 0, 0, 256, 256, 0, 0, 256), frag(1, transferplan.TargetV, 0, 0, 256, 256, 0, 0, 256)}}}},
			{DecodeTPRank: 1, PlanKind: transferplan.PlanFragmented, TargetTPRanks: []int{2}, RequiredPrefillResponseNum: 1, IdlePrefillTPRanks: []int{},
				Targets: []transferplan.PlanTarget{{PrefillTPRank: 2, RequiredDstInfoNum: 1, Fragments: []transferplan.TransferFragment{
					frag(0, transferplan.TargetK, 2, 1, 256, 256, 0, 0, 256), frag(1, transferplan.TargetV, 2, 1, 256, 256, 0, 0, 256)}}}},
		},
	}, {
		name:   "MLA P2→D3 (ratio does not divide): decode 0,1 share prefill 0, decode 2 uses prefill 1",
		layout: mla(2, 3).kv(transferplan.TargetK, 1, 576, 1).build(),
		want: []transferplan.RoutePlan{
			mlaWant(0, []int{0}, 0, map[int]int{0: 2}),
			mlaWant(1, []int{0}, 0, map[int]int{0: 2}),
			mlaWant(2, []int{1}, 1, map[int]int{1: 1}),
		},
	}, {
		name:   "MLA P3→D2 (ratio does not divide): every prefill rank is covered, extra ones as dummies",
		layout: mla(3, 2).kv(transferplan.TargetK, 1, 576, 1).build(),
		want: []transferplan.RoutePlan{
			mlaWant(0, []int{0}, 0, map[int]int{0: 1}),
			mlaWant(1, []int{1, 2}, 1, map[int]int{1: 1, 2: 1}),
		},
	}, {
		name:   "MLA L1.5 P2→D2: every prefill rank answers every decode rank",
		layout: mla(2, 2).l15().kv(transferplan.TargetK, 1, 576, 1).build(),
		want:   []transferplan.RoutePlan{l15Want(0, 2, 2), l15Want(1, 2, 2)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := planAll(t, tc.layout)
			for d := range tc.want {
				if !reflect.DeepEqual(got[d], tc.want[d]) {
					t.Errorf("decode rank %d:\n got %+v\nwant %+v", d, got[d], tc.want[d])
				}
			}
		})
	}
}

func mlaWant(d int, targets []int, real int, dstInfo map[int]int) transferplan.RoutePlan {
	p := transferplan.RoutePlan{DecodeTPRank: d, PlanKind: transferplan.PlanMLA, TargetTPRank: intp(real), TargetTPRanks: targets,
		RequiredPrefillResponseNum: 1, SupportsRemoteSpecCandidates: true, IdlePrefillTPRanks: []int{}}
	for _, r := range targets {
		p.Targets = append(p.Targets, transferplan.PlanTarget{PrefillTPRank: r, IsDummy: r != real, RequiredDstInfoNum: dstInfo[r], Fragments: []transferplan.TransferFragment{}})
	}
	return p
}

func l15Want(d, prefillTP, decodeTP int) transferplan.RoutePlan {
	p := transferplan.RoutePlan{DecodeTPRank: d, PlanKind: transferplan.PlanMLA, RequiredPrefillResponseNum: prefillTP,
		SupportsRemoteSpecCandidates: true, IdlePrefillTPRanks: []int{}}
	for r := range prefillTP {
		p.TargetTPRanks = append(p.TargetTPRanks, r)
		p.Targets = append(p.Targets, transferplan.PlanTarget{PrefillTPRank: r, RequiredDstInfoNum: decodeTP, Fragments: []transferplan.TransferFragment{}})
	}
	return p
}
