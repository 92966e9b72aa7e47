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

package modelplan_test

import (
	"fmt"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// pdtopo advise over 5 × 5 TP choices of an 80-layer model (Llama-3.1-70B):
// 25 rows derived, sized and planned, with one-token and 16-token pages.
func BenchmarkAdvise5x5TP80Layers(b *testing.B) {
	m := model(b, llama31_70B)
	tps := roles(1, 2, 4, 8, 16)
	for _, tokens := range []int{1, 16} {
		b.Run(fmt.Sprintf("%d-tokens-per-page", tokens), func(b *testing.B) {
			base := modelgeom.Options{KVCacheDtype: "bfloat16", TokensPerPage: tokens}
			for b.Loop() {
				if rows := modelplan.Advise(m, base, false, tps, tps, transferplan.DefaultBudget); len(rows) != 25 {
					b.Fatalf("%d rows", len(rows))
				}
			}
		})
	}
}
