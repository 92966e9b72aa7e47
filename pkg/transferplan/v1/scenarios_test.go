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

// Named production-like layouts, each checked on the properties that make it
// interesting. Llama-3-70B: 80 layers, 8 KV heads, head dim 128 in bf16, so
// one head of one token is 256 bytes.
func TestRoutePlanScenarios(t *testing.T) {
	const head = 256
	cases := []struct {
		name   string
		layout Layout
		check  func(t *testing.T, plans []transferplan.RoutePlan)
	}{{
		name:   "Llama-3-70B GQA P8→D4: each decode rank pulls two heads from two prefill ranks",
		layout: mha(8, 4).heads(80, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantKind(t, p, transferplan.PlanFragmented)
				wantTargets(t, p, 2*d, 2*d+1)
				for i, tg := range p.Targets {
					wantEqual(t, "fan-out", tg.RequiredDstInfoNum, 1)
					wantEqual(t, "fragments per target", len(tg.Fragments), 160)
					// Walk order: layer 0 K (index 0), layer 0 V (index 80), layer 1 K...
					wantEqual(t, "walk order", []int{tg.Fragments[0].BufferIndex, tg.Fragments[1].BufferIndex, tg.Fragments[2].BufferIndex}, []int{0, 80, 1})
					f := tg.Fragments[1]
					wantEqual(t, "fragment", f, frag(80, transferplan.TargetV, 2*d+i, d, head, 2*head, 0, int64(i*head), head))
				}
			}
		},
	}, {
		name:   "Llama-3-70B GQA P4→D8: two decode ranks split each prefill rank's heads",
		layout: mha(4, 8).heads(80, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantTargets(t, p, d/2)
				tg := p.Targets[0]
				wantEqual(t, "fan-out", tg.RequiredDstInfoNum, 2)
				wantEqual(t, "fragment", tg.Fragments[0], frag(0, transferplan.TargetK, d/2, d, 2*head, head, int64(d%2*head), 0, head))
			}
		},
	}, {
		name:   "8 KV heads P16→D1: replica groups of 2, odd prefill ranks idle",
		layout: mha(16, 1).heads(2, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			p := plans[0]
			wantTargets(t, p, 0, 2, 4, 6, 8, 10, 12, 14)
			wantEqual(t, "idle", p.IdlePrefillTPRanks, []int{1, 3, 5, 7, 9, 11, 13, 15})
			wantEqual(t, "responses", p.RequiredPrefillResponseNum, 8)
			for k, tg := range p.Targets {
				wantEqual(t, "fragment", tg.Fragments[0], frag(0, transferplan.TargetK, 2*k, 0, head, 8*head, 0, int64(k*head), head))
			}
		},
	}, {
		name: "DP attention prefill TP8 DP2 → decode TP4 DP2: planned on per-DP sizes P4→D2",
		layout: mha(8, 4).dp(2, 2).
			kvItems(transferplan.TargetK, 4, 4*head, 2*head, head).kvItems(transferplan.TargetV, 4, 4*head, 2*head, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			wantEqual(t, "plans", len(plans), 2)
			wantTargets(t, plans[1], 2, 3)
			wantEqual(t, "dst offset", plans[1].Targets[1].Fragments[0].DstByteOffset, int64(2*head))
		},
	}, {
		name:   "DeepSeek-like MLA P8→D16: two decode ranks per prefill rank",
		layout: mla(8, 16).kv(transferplan.TargetK, 61, 656*64, 1).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantEqual(t, "plan", p, mlaWant(d, []int{d / 2}, d/2, map[int]int{d / 2: 2}))
			}
		},
	}, {
		name:   "DeepSeek-like MLA P16→D8: one real source, one dummy",
		layout: mla(16, 8).kv(transferplan.TargetK, 61, 656*64, 1).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantEqual(t, "plan", p, mlaWant(d, []int{2 * d, 2*d + 1}, 2*d, map[int]int{2 * d: 1, 2*d + 1: 1}))
			}
		},
	}, {
		name:   "DeepSeek-like MLA L1.5 P4→D8: all prefill ranks answer",
		layout: mla(4, 8).l15().kv(transferplan.TargetK, 61, 656*64, 1).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantEqual(t, "plan", p, l15Want(d, 4, 8))
			}
		},
	}, {
		name:   "MLA with 16 tokens per page moves whole items and is accepted",
		layout: mla(8, 4).tokensPerPage(16).kv(transferplan.TargetK, 4, 656*16, 1).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			wantTargets(t, plans[3], 6, 7)
		},
	}, {
		name: "Mamba hybrid P4→D2: state channels sharded after the KV buffers, own index space",
		layout: mha(4, 2).heads(2, 8, head).
			state(3, 8192, 4096, 1).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			tg := plans[1].Targets[1] // decode rank 1, prefill rank 3
			wantEqual(t, "fragments", len(tg.Fragments), 4+3)
			wantEqual(t, "state fragment", tg.Fragments[4], frag(0, transferplan.MambaState, 3, 1, 4096, 8192, 0, 4096, 4096))
			wantEqual(t, "last state index", tg.Fragments[6].BufferIndex, 2)
		},
	}, {
		name: "draft layers: target layers walk first, then draft K/V pairs",
		// pointer order: TK0 TK1 TV0 TV1 DK0 DV0 (indices 0..5)
		layout: mha(2, 1).kv(transferplan.TargetK, 2, 512, 256).kv(transferplan.TargetV, 2, 512, 256).kv(transferplan.DraftK, 1, 512, 256).kv(transferplan.DraftV, 1, 512, 256).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			var order []int
			var kinds []transferplan.BufferKind
			for _, f := range plans[0].Targets[0].Fragments {
				order, kinds = append(order, f.BufferIndex), append(kinds, f.BufferKind)
			}
			wantEqual(t, "walk order", order, []int{0, 2, 1, 3, 4, 5})
			wantEqual(t, "kinds", kinds, []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV, transferplan.TargetK, transferplan.TargetV, transferplan.DraftK, transferplan.DraftV})
		},
	}, {
		name:   "prefill item left to the default: decode 1024 × D2 / P4 = 512",
		layout: mha(4, 2).kv(transferplan.TargetK, 1, 1024, 256).kv(transferplan.TargetV, 1, 1024, 256).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			wantEqual(t, "src stride", plans[0].Targets[0].Fragments[0].SrcPageStrideBytes, int64(512))
			wantTargets(t, plans[0], 0, 1)
		},
	}, {
		name:   "identity with 16 tokens per page: whole items are contiguous",
		layout: mha(4, 4).tokensPerPage(16).heads(2, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			wantKind(t, plans[2], transferplan.PlanIdentity)
			wantTargets(t, plans[2], 2)
		},
	}, {
		// A 16-token page of a prefill rank is 16 rows of 1 head (256 B); of a
		// decode rank 16 rows of 2 heads (512 B). Prefill rank 2d+i's head is
		// head i of every decode row: one fragment per row.
		name:   "Llama-3-70B GQA P8→D4 with 16-token pages: one fragment per token row",
		layout: mha(8, 4).tokensPerPage(16).heads(80, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantTargets(t, p, 2*d, 2*d+1)
				for i, tg := range p.Targets {
					wantEqual(t, "fragments per target", len(tg.Fragments), 160*16)
					// Walk order: buffer 0 rows 0..15, buffer 80 (layer 0 V) rows 0..15, ...
					wantEqual(t, "row 0 of layer 0 K", tg.Fragments[0], frag(0, transferplan.TargetK, 2*d+i, d, 16*head, 32*head, 0, int64(i*head), head))
					wantEqual(t, "row 1 of layer 0 V", tg.Fragments[17], frag(80, transferplan.TargetV, 2*d+i, d, 16*head, 32*head, head, int64(2*head+i*head), head))
					wantEqual(t, "row 15 of layer 1 K", tg.Fragments[47], frag(1, transferplan.TargetK, 2*d+i, d, 16*head, 32*head, 15*head, int64(30*head+i*head), head))
				}
			}
		},
	}, {
		// 8 KV heads: prefill TP16 holds 1 head per rank (pairs of ranks share
		// one), decode TP8 holds 1: each slice is whole rows on both sides,
		// so a page's 64 rows are contiguous and move as one fragment.
		name:   "8 KV heads P16→D8 with 64-token pages: whole rows, one fragment per page",
		layout: mha(16, 8).tokensPerPage(64).heads(80, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				wantTargets(t, p, 2*d)
				wantEqual(t, "fragments", len(p.Targets[0].Fragments), 160)
				wantEqual(t, "fragment", p.Targets[0].Fragments[1], frag(80, transferplan.TargetV, 2*d, d, 64*head, 64*head, 0, 0, 64*head))
			}
		},
	}, {
		// The example: one prefill rank with 8 heads, decode TP4 with 2
		// each: decode rank d takes heads 2d, 2d+1 of each of the 4 token rows.
		name:   "8 KV heads P1→D4 with 4-token pages: 2 of 8 heads from each token row",
		layout: mha(1, 4).tokensPerPage(4).heads(1, 8, head).build(),
		check: func(t *testing.T, plans []transferplan.RoutePlan) {
			for d, p := range plans {
				frags := p.Targets[0].Fragments
				wantEqual(t, "fragments", len(frags), 2*4)
				for r := range 4 {
					wantEqual(t, "row", frags[r], frag(0, transferplan.TargetK, 0, d, 4*8*head, 4*2*head, int64(r*8*head+2*d*head), int64(r*2*head), 2*head))
				}
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, planAll(t, tc.layout)) })
	}
}

func wantKind(t *testing.T, p transferplan.RoutePlan, kind transferplan.PlanKind) {
	t.Helper()
	if p.PlanKind != kind {
		t.Errorf("decode rank %d: plan kind %s, want %s", p.DecodeTPRank, p.PlanKind, kind)
	}
}

func wantTargets(t *testing.T, p transferplan.RoutePlan, ranks ...int) {
	t.Helper()
	if !reflect.DeepEqual(p.TargetTPRanks, ranks) {
		t.Fatalf("decode rank %d: targets %v, want %v", p.DecodeTPRank, p.TargetTPRanks, ranks)
	}
	for i, tg := range p.Targets {
		if tg.PrefillTPRank != ranks[i] {
			t.Fatalf("decode rank %d: target %d is prefill rank %d, want %d", p.DecodeTPRank, i, tg.PrefillTPRank, ranks[i])
		}
	}
}

func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %+v, want %+v", what, got, want)
	}
}
