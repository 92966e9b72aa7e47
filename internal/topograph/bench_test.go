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

package topograph_test

import (
	"io"
	"testing"

	"github.com/pdtopo/pdtopo/internal/topograph"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// BenchmarkDraw builds and renders the picture of a plan set: 64 ranks a
// side drawn rank by rank, and 1024 decode ranks aggregated.
func BenchmarkDraw(b *testing.B) {
	for _, c := range []struct {
		name string
		p, d int
	}{
		{"MLA_P64_D64", 64, 64},
		{"MLA_P256_D1024_aggregated", 256, 1024},
	} {
		set, err := planv1.Plan(mlaLayout(c.p, c.d))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/svg", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g, err := topograph.Build("bench", set)
				if err != nil {
					b.Fatal(err)
				}
				if err := topograph.WriteSVG(io.Discard, g); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/dot", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g, err := topograph.Build("bench", set)
				if err != nil {
					b.Fatal(err)
				}
				if err := topograph.WriteDOT(io.Discard, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
