package controllers

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// BenchmarkPlanPairGQA is the CPU a reconcile spends on a typical spec:
// planning and encoding the GQA P8→D4 layout (80 layers).
func BenchmarkPlanPairGQA(b *testing.B) {
	p := gqaP8D4("ns", "llama").obj()
	for b.Loop() {
		if out := planPair(p, transferplan.DefaultBudget); out.objects == nil {
			b.Fatal("no plans")
		}
	}
}

// BenchmarkPlanPair1024DecodeRanks is the largest layout the tests publish:
// prefill TP512 → decode TP1024, 400 buffers, 409 600 fragments.
func BenchmarkPlanPair1024DecodeRanks(b *testing.B) {
	p := newPair("ns", "wide").prefill(512, 1).decode(1024, 1).kvPair(200, 128, 256, 64).obj()
	for b.Loop() {
		if out := planPair(p, transferplan.DefaultBudget); out.objects == nil {
			b.Fatal("no plans")
		}
	}
}
