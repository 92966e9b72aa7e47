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
	"fmt"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// benchLayout is the layout: P64→D48 (dp 1), 94 TargetK + 94 TargetV
// buffers and 48 state buffers, prefill item 192, decode item 256, 64-byte
// units. The reference takes 31 s to plan all 48 ranks on this machine.
func benchLayout(decodeTP int) Layout {
	const prefillTP = 64
	item := int64(256) * 48 / int64(decodeTP) // keep 192 units of 64 bytes globally
	return mha(prefillTP, decodeTP).
		kvItems(transferplan.TargetK, 94, item, 192, 64).kvItems(transferplan.TargetV, 94, item, 192, 64).
		state(48, item, 192, 64).build()
}

func BenchmarkPlanAllRanks(b *testing.B) {
	l := benchLayout(48)
	set, err := Plan(l)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Plan(l); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(set.Summarize().Fragments), "fragments")
}

// BenchmarkPlanScaling plans all ranks of layouts with 12 to 192 decode ranks
// (same global geometry): ns/op per decode rank should stay flat, i.e. the cost
// grows linearly in decode ranks, not quadratically as the reference's does.
func BenchmarkPlanScaling(b *testing.B) {
	for _, d := range []int{12, 24, 48, 96, 192} {
		l := benchLayout(d)
		b.Run(fmt.Sprintf("D%d", d), func(b *testing.B) {
			for b.Loop() {
				if _, err := Plan(l); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/rank")
		})
	}
}

// gqaPaged is a GQA model of 80 layers (K and V) whose KV heads are 128
// bf16 values (256 bytes per token), paged tokensPerPage tokens a page,
// prefill TP16 → decode TP8. With 8 KV heads both sides hold one head per
// rank (the prefill in replica pairs): whole rows, one fragment per page.
// With 16 heads each decode rank takes one head of each token row of two
// prefill ranks: one fragment per row, 8 × 2 × 160 × 64 = 163,840 fragments.
func gqaPaged(kvHeads, tokensPerPage int) Layout {
	return mha(16, 8).tokensPerPage(tokensPerPage).heads(80, kvHeads, 256).build()
}

func BenchmarkPlanGQAP16D8TokenPages(b *testing.B) {
	for _, c := range []struct{ heads, tokens int }{{8, 64}, {16, 1}, {16, 64}} {
		l := gqaPaged(c.heads, c.tokens)
		b.Run(fmt.Sprintf("%dheads/%dtokens", c.heads, c.tokens), func(b *testing.B) {
			set, err := Plan(l)
			if err != nil {
				b.Fatal(err)
			}
			fragments := set.Summarize().Fragments
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Plan(l); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fragments), "fragments")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(fragments), "ns/fragment")
		})
	}
}
