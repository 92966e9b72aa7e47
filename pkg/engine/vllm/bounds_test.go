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

package vllm

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// An MLA model, which vLLM serves at any TP ratio.
const deepseek = `{"architectures":["DeepseekV3ForCausalLM"],"model_type":"deepseek_v3","hidden_size":7168,"num_attention_heads":128,"num_key_value_heads":128,"num_hidden_layers":61,"kv_lora_rank":512,"qk_rope_head_dim":64}`

func spec(ptp, dtp int32) pdv1.PDPairSpec {
	page := int32(16)
	return pdv1.PDPairSpec{
		Engine:  &pdv1.EngineSpec{Name: pdv1.EngineVLLM},
		Model:   &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: []byte(deepseek)}},
		Prefill: pdv1.FleetLayout{TensorParallelSize: ptp, TokensPerPage: &page},
		Decode:  pdv1.FleetLayout{TensorParallelSize: dtp, TokensPerPage: &page},
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

// vLLM's mapping holds max(prefill TP, decode TP) targets, so the largest
// layouts the CRD admits (TP 4096; no DP or PP for vLLM) fit the default
// budget; a smaller budget refuses them by the sized numbers, and sizing
// allocates nothing per rank.
func TestSizeLargestLayouts(t *testing.T) {
	tight := transferplan.Budget{MaxPlanBytes: 64 << 10}
	for _, c := range []struct {
		name           string
		spec           pdv1.PDPairSpec
		ranks, targets int64
	}{
		{"prefill TP 4096 → 1", spec(4096, 1), 1, 4096},
		{"prefill TP 1 → 4096", spec(1, 4096), 4096, 4096},
		{"TP 4096 both", spec(4096, 4096), 4096, 4096},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := resolve(t, c.spec)
			size, err := p.Size(transferplan.DefaultBudget)
			if err != nil {
				t.Fatalf("refused within the default budget: %v", err)
			}
			if size.Targets != c.targets || int64(size.DecodeTPRanks) != c.ranks {
				t.Errorf("sized %d decode ranks, %d targets; want %d, %d", size.DecodeTPRanks, size.Targets, c.ranks, c.targets)
			}
			var be *transferplan.BudgetError
			if _, err := p.Size(tight); !errors.As(err, &be) || be.Exceeded[0] != transferplan.LimitPlanBytes {
				t.Fatalf("a %d-byte budget: %v, want a BudgetError on MaxPlanBytes", tight.MaxPlanBytes, err)
			}
			if allocs := testing.AllocsPerRun(3, func() { _, _ = p.Size(transferplan.DefaultBudget) }); allocs > 4 {
				t.Errorf("Size allocates %.0f times: it maps", allocs)
			}
		})
	}
}

func BenchmarkJudgeLargestLayout(b *testing.B) {
	s := spec(4096, 1)
	for b.Loop() {
		p := resolve(b, s)
		if _, err := p.Size(transferplan.DefaultBudget); err != nil {
			b.Fatal(err)
		}
	}
}
