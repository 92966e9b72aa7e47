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

package sglang

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

const llama = `{"architectures":["LlamaForCausalLM"],"model_type":"llama","num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"hidden_size":8192,"num_hidden_layers":80}`

// spec is an SGLang pair at the layouts given as TP, DP, PP per role; the
// CRD admits up to 4096 for each (api/v1alpha1/pdpair_types.go).
func spec(ptp, pdp, ppp, dtp, ddp, dpp int32) pdv1.PDPairSpec {
	role := func(tp, dp, pp int32) pdv1.FleetLayout {
		return pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: &dp, PipelineParallelSize: &pp, TokensPerPage: ptr(int32(64))}
	}
	return pdv1.PDPairSpec{
		Engine:  &pdv1.EngineSpec{Name: pdv1.EngineSGLang},
		Model:   &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(llama)}},
		Prefill: role(ptp, pdp, ppp), Decode: role(dtp, ddp, dpp),
	}
}

func resolve(t testing.TB, s pdv1.PDPairSpec) engine.Pair {
	t.Helper()
	p, err := New().Resolve(s, engine.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The largest layouts the CRD admits are sized by formula, refused past
// the default budget with the numbers, and neither judging nor sizing
// allocates per rank (a mapping of 16M targets took 13.6 s and 2.5 GB).
func TestSizeLargestLayouts(t *testing.T) {
	for _, c := range []struct {
		name           string
		spec           pdv1.PDPairSpec
		ranks, targets int64
		over           bool
	}{
		{"attention TP 4096 → 1", spec(4096, 1, 1, 4096, 4096, 1), 4096, 4096 * 4096, true},
		{"prefill PP 4096, decode PP 1", spec(4096, 4096, 4096, 4096, 4096, 1), 4096, 4096 * 4096, true},
		{"PP 4096 both", spec(4096, 4096, 4096, 4096, 4096, 4096), 4096 * 4096, 4096 * 4096, true},
		{"attention TP 4096 → 1 at prefill PP 4096", spec(4096, 1, 4096, 4096, 4096, 1), 4096, 4096 * 4096 * 4096, true},
		{"TP 4096 DP 4096 both", spec(4096, 4096, 1, 4096, 4096, 1), 4096, 4096, false},
		{"attention TP 1 → 4096", spec(4096, 4096, 1, 4096, 1, 1), 4096, 4096, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := resolve(t, c.spec)
			size, err := p.Size(transferplan.DefaultBudget)
			if size.Targets != c.targets || int64(size.DecodeTPRanks) != c.ranks {
				t.Errorf("sized %d decode ranks, %d targets; want %d, %d", size.DecodeTPRanks, size.Targets, c.ranks, c.targets)
			}
			var be *transferplan.BudgetError
			if got := errors.As(err, &be); got != c.over {
				t.Fatalf("over budget %t (%v), want %t", got, err, c.over)
			}
			if c.over && !strings.Contains(be.Error(), fmt.Sprintf("%d decode TP ranks", c.ranks)) {
				t.Errorf("%v does not name the %d decode ranks", be, c.ranks)
			}
			if allocs := testing.AllocsPerRun(3, func() { _, _ = p.Size(transferplan.DefaultBudget) }); allocs > 4 {
				t.Errorf("Size allocates %.0f times: it maps", allocs)
			}
		})
	}
}

// Judging the largest layout allocates what reading the model costs,
// nothing per rank.
func TestResolveLargestLayoutDoesNotMap(t *testing.T) {
	small := testing.AllocsPerRun(3, func() { resolve(t, spec(4, 1, 1, 4, 4, 1)) })
	large := testing.AllocsPerRun(3, func() { resolve(t, spec(4096, 1, 4096, 4096, 4096, 1)) })
	if large > small+8 {
		t.Fatalf("Resolve allocates %.0f times at TP 4096, %.0f at TP 4: it maps", large, small)
	}
}

// The size bounds the JSON pdtopo plan prints for the mapping.
func TestSizeBoundsPlanJSON(t *testing.T) {
	for _, s := range []pdv1.PDPairSpec{spec(8, 1, 3, 8, 8, 1), spec(64, 1, 1, 64, 64, 1), spec(16, 16, 1, 1024, 1, 1), spec(1000, 1000, 10, 1000, 1000, 10)} {
		p := resolve(t, s)
		size, err := p.Size(transferplan.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.Map()
		if err != nil {
			t.Fatal(err)
		}
		set := m.(*engine.TargetMap).PlanSet()
		var total int64
		for i := range set.Plans {
			b, _ := json.Marshal(set.Plans[i])
			total += int64(len(b)) + 1
			if int64(len(b)) > size.MaxRankPlanBytes {
				t.Fatalf("rank %d: %d bytes, sized at most %d", i, len(b), size.MaxRankPlanBytes)
			}
		}
		if total > size.PlanBytes || int64(len(set.Plans)) != int64(size.DecodeTPRanks) {
			t.Fatalf("%d plans, %d bytes; sized %d, %d", len(set.Plans), total, size.DecodeTPRanks, size.PlanBytes)
		}
	}
}

func BenchmarkJudgeLargestLayout(b *testing.B) {
	s := spec(4096, 1, 4096, 4096, 4096, 1)
	for b.Loop() {
		p := resolve(b, s)
		if _, err := p.Size(transferplan.DefaultBudget); err == nil {
			b.Fatal("admitted")
		}
	}
}
