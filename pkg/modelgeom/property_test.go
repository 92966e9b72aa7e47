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

package modelgeom_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/kvsim"
)

// randomGQA draws a dense GQA (or MHA, or MQA) config and a layout the
// engine could run it with: both TP sizes among the model's valid ones.
func randomGQA(rng *rand.Rand) (config string, o modelgeom.Options, kv, headDim int, dtypeBytes int64) {
	kv = []int{1, 2, 4, 8, 16}[rng.IntN(5)]
	heads := kv * []int{1, 2, 4, 8}[rng.IntN(4)]
	headDim = []int{16, 64, 128}[rng.IntN(3)]
	layers := 1 + rng.IntN(3)
	hd := fmt.Sprintf(`"head_dim": %d, "hidden_size": %d`, headDim, heads*headDim*3) // head_dim wins
	if rng.IntN(2) == 0 {
		hd = fmt.Sprintf(`"hidden_size": %d`, heads*headDim) // head_dim = hidden_size / heads
	}
	kvKey := fmt.Sprintf(`"num_key_value_heads": %d, `, kv)
	if kv == heads && rng.IntN(2) == 0 {
		kvKey = "" // MHA without the key
	}
	config = fmt.Sprintf(`{"architectures": ["LlamaForCausalLM"], "num_attention_heads": %d, %s"num_hidden_layers": %d, %s}`,
		heads, kvKey, layers, hd)
	// Every TP the engine accepts: divisors of the heads that split the KV heads.
	var valid []int
	for t := 1; t <= heads; t++ {
		if heads%t == 0 && (t <= kv && kv%t == 0 || t > kv && t%kv == 0) {
			valid = append(valid, t)
		}
	}
	dtype := []string{"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"}[rng.IntN(4)]
	dtypeBytes = map[string]int64{"bfloat16": 2, "float16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1}[dtype]
	pdp, ddp := []int{1, 1, 2}[rng.IntN(3)], []int{1, 1, 2}[rng.IntN(3)]
	o = modelgeom.Options{KVCacheDtype: dtype, TokensPerPage: []int{1, 1, 2, 4, 16}[rng.IntN(5)],
		Prefill: modelgeom.Role{TP: valid[rng.IntN(len(valid))] * pdp, DP: pdp},
		Decode:  modelgeom.Role{TP: valid[rng.IntN(len(valid))] * ddp, DP: ddp}}
	return config, o, kv, headDim, dtypeBytes
}

// layoutOf expands derived groups into the planner's buffers, one per layer.
func layoutOf(p *modelgeom.Pair, o modelgeom.Options) planv1.Layout {
	kinds := map[string]transferplan.BufferKind{"TargetK": transferplan.TargetK, "TargetV": transferplan.TargetV,
		"DraftK": transferplan.DraftK, "DraftV": transferplan.DraftV}
	l := planv1.Layout{Attention: transferplan.AttentionBackend(p.Attention), TokensPerPage: o.TokensPerPage,
		Prefill: transferplan.Parallelism{TPSize: o.Prefill.TP, DPSize: o.Prefill.DP},
		Decode:  transferplan.Parallelism{TPSize: o.Decode.TP, DPSize: o.Decode.DP}}
	for i, g := range p.KVBuffers {
		for range g.Count {
			l.KVBuffers = append(l.KVBuffers, planv1.BufferSpec{Kind: kinds[g.Kind], Field: fmt.Sprintf("kvBuffers[%d]", i),
				PrefillItemBytes: g.PrefillItemBytes, DecodeItemBytes: g.DecodeItemBytes,
				PrefillUnitBytes: g.PrefillUnitBytes, DecodeUnitBytes: g.DecodeUnitBytes})
		}
	}
	return l
}

// TestDerivedGQAPlansMoveTheRightBytes: for random dense GQA configs and
// layouts the engine accepts, the derived pair describes the heads each rank
// holds as the engine does (max(kvHeads / TP, 1) heads of head_dim × dtype
// bytes per token row, computed here from the config), and wherever the
// planner accepts the pair, executing its plans byte by byte as the
// reference prefill does (test/kvsim) fills every decode byte with the
// prefill byte of the same token, layer and head.
func TestDerivedGQAPlansMoveTheRightBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 2026))
	planned := 0
	const n = 300
	for i := range n {
		config, o, kv, headDim, e := randomGQA(rng)
		p, err := modelgeom.Derive([]byte(config), o)
		if err != nil {
			t.Fatalf("case %d %s %+v: %v", i, config, o, err)
		}
		checkHeads(t, p, o, kv, headDim, e)
		l := layoutOf(p, o)
		set, err := planv1.Plan(l)
		var le *transferplan.LayoutError
		if errors.As(err, &le) && !transferplan.IsInvalidLayout(err) {
			continue // a pair the wire cannot bridge: refused, with a reason
		}
		if err != nil {
			t.Fatalf("case %d %s %+v: %v", i, config, o, err)
		}
		planned++
		if err := simulate(rng, l, set); err != nil {
			t.Fatalf("case %d %s, prefill TP %d DP %d, decode TP %d DP %d, %d tokens/page: %v",
				i, config, o.Prefill.TP, o.Prefill.DP, o.Decode.TP, o.Decode.DP, o.TokensPerPage, err)
		}
	}
	if planned < n/2 {
		t.Errorf("only %d of %d random pairs were compatible: the property is barely exercised", planned, n)
	}
}

// checkHeads compares every derived group with the engine's head split.
func checkHeads(t *testing.T, p *modelgeom.Pair, o modelgeom.Options, kv, headDim int, e int64) {
	t.Helper()
	unit := int64(headDim) * e
	pre := int64(max(kv/(o.Prefill.TP/o.Prefill.DP), 1))
	dec := int64(max(kv/(o.Decode.TP/o.Decode.DP), 1))
	T := int64(o.TokensPerPage)
	for _, g := range p.KVBuffers {
		if g.PrefillUnitBytes != unit || g.DecodeUnitBytes != unit ||
			g.PrefillItemBytes != T*pre*unit || g.DecodeItemBytes != T*dec*unit {
			t.Fatalf("%+v: want units %d, items %d × %d heads × %d B (prefill) and %d × %d × %d (decode)", g, unit, T, pre, unit, T, dec, unit)
		}
	}
}

// simulate runs a few decode ranks' plans through kvsim: buffers keyed by
// index, token-major pages of tokensPerPage rows, pages in scrambled slots.
func simulate(rng *rand.Rand, l planv1.Layout, set *transferplan.PlanSet) error {
	var kv []kvsim.Placement
	for i, b := range l.KVBuffers {
		pl, err := kvsim.Buffer{Key: i, Rows: l.TokensPerPage,
			Prefill: kvsim.Side{TP: l.Prefill.TPPerDP(), ItemBytes: b.PrefillItemBytes, UnitBytes: b.PrefillUnitBytes},
			Decode:  kvsim.Side{TP: l.Decode.TPPerDP(), ItemBytes: b.DecodeItemBytes, UnitBytes: b.DecodeUnitBytes}}.Place()
		if err != nil {
			return err
		}
		kv = append(kv, pl)
	}
	for _, d := range []int{0, len(set.Plans) - 1, rng.IntN(len(set.Plans))} {
		plan := set.Plans[d]
		n := 1 + rng.IntN(2)
		q := kvsim.Request{KV: kv, DecodeRank: plan.DecodeTPRank, KVPages: kvsim.ScrambledPages(rng, n, n+1),
			StatePgs: kvsim.ScrambledPages(rng, 1, 1)}
		m := q.NewMemory()
		for _, tg := range plan.Targets {
			st := kvsim.Target{PrefillRank: tg.PrefillTPRank, Dummy: tg.IsDummy}
			for _, f := range tg.Fragments {
				st.Fragments = append(st.Fragments, kvsim.Fragment{Index: f.BufferIndex,
					SrcStride: f.SrcPageStrideBytes, DstStride: f.DstPageStrideBytes,
					SrcOffset: f.SrcByteOffset, DstOffset: f.DstByteOffset, Bytes: f.BytesPerPage})
			}
			if err := q.Execute(m, st); err != nil {
				return fmt.Errorf("decode rank %d: %w", d, err)
			}
		}
		if err := q.Verify(m); err != nil {
			return err
		}
	}
	return nil
}
