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
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// BenchmarkPlanPairGQA is the CPU a reconcile spends on a typical spec:
// planning and encoding the GQA P8→D4 layout (80 layers).
func BenchmarkPlanPairGQA(b *testing.B) {
	p := fixtures.Pair("ns", "llama").Spec(fixtures.Llama70B(8, 4)).Obj()
	for b.Loop() {
		if out := planPair(p, transferplan.DefaultBudget); out.objects == nil {
			b.Fatal("no plans")
		}
	}
}

// BenchmarkPlanPair1024DecodeRanks is the largest layout the tests publish:
// prefill TP512 → decode TP1024, 400 buffers, 409 600 fragments.
func BenchmarkPlanPair1024DecodeRanks(b *testing.B) {
	p := fixtures.Pair("ns", "wide").Prefill(512, 1).Decode(1024, 1).KVPair(200, 128, 256, 64).Obj()
	for b.Loop() {
		if out := planPair(p, transferplan.DefaultBudget); out.objects == nil {
			b.Fatal("no plans")
		}
	}
}
