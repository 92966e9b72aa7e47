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
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/sglang/rules"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Name is the engine's name, as spec.engine.name gives it.
const Name = string(pdv1.EngineSGLang)

// Engine is SGLang's engine.Engine.
type Engine struct{ engine.SelfTransferring }

var _ engine.Engine = Engine{}

// New is SGLang's engine.
func New() Engine { return Engine{} }

// Name is "sglang".
func (Engine) Name() string { return Name }

// Resolve judges the pair by SGLang's rules.
func (Engine) Resolve(spec pdv1.PDPairSpec, in engine.Inputs) (engine.Pair, error) {
	cfg, err := engine.ReadHFConfig(spec, in)
	if err != nil {
		return nil, err
	}
	rp := rules.Pair{
		Model:   model(cfg),
		Prefill: role(spec, spec.Prefill),
		Decode:  role(spec, spec.Decode),
		Backend: rules.Backend(spec.KVConnectorOrDefault()),
	}
	return &pair{spec: spec, rules: rp, verdict: rules.Judge(rp)}, nil
}

// Advise is not yet SGLang's: the layouts are ranked by rules.Rank, which
// pdtopo advise --engine sglang does not call yet.
func (Engine) Advise(engine.AdviceQuery) []modelplan.Row { return nil }

// model is the geometry SGLang's rules read, from the config.
func model(c *engine.HFConfig) rules.Model {
	m := c.Model
	types := c.LayerTypes()
	out := rules.Model{
		NumAttentionHeads:   int(m.AttentionHeads),
		NumKVHeads:          int(m.KVHeads),
		HeadDim:             int(m.HeadDim),
		NumHiddenLayers:     c.Int("num_hidden_layers"),
		UseMLA:              m.Family == modelgeom.FamilyMLA,
		SlidingWindowLayers: swaLayers(c, types),
		DSAIndexer:          c.Has("index_topk"),
		MambaLayers:         int(m.MambaLayers),
	}
	if out.UseMLA {
		out.NumKVHeads = 1
	}
	if out.MambaLayers == 0 {
		out.MambaLayers = types[engine.LayerLinearAttention]
	}
	return out
}

// swaLayers are the layers of SGLang's hybrid sliding-window pool: none
// unless the architecture has one (rules.HybridSWA), whatever its layer
// types say; at least one when it has (the pool, not its size, makes the
// state component).
func swaLayers(c *engine.HFConfig, types map[string]int) int {
	if !rules.HybridSWA(c.Architectures(), c.Bool("is_hybrid_swa")) {
		return 0
	}
	return max(1, types[engine.LayerSlidingAttention]+types[engine.LayerChunkedAttention])
}

// role is one side as SGLang is started on it.
func role(spec pdv1.PDPairSpec, r pdv1.FleetLayout) rules.Role {
	return rules.Role{
		TP:           int(r.TensorParallelSize),
		DP:           int(r.DataParallel()),
		PP:           int(r.PipelineParallel()),
		PageSize:     int(spec.RoleTokensPerPage(r)),
		KVCacheDtype: spec.RoleKVCacheDtype(r),
	}
}

// pair is one PDPair as SGLang's rules judged it.
type pair struct {
	spec    pdv1.PDPairSpec
	rules   rules.Pair
	verdict rules.Verdict
}

var _ engine.Pair = (*pair)(nil)

func (p *pair) Derived() *pdv1.DerivedBuffers { return nil }

func (p *pair) Explicit() pdv1.PDPairSpec { return p.spec }

// Size is the mapping's size; nothing is planned, so the budget holds.
func (p *pair) Size(transferplan.Budget) (transferplan.PlanSize, error) {
	if err := p.refusal(); err != nil {
		return transferplan.PlanSize{}, err
	}
	size := transferplan.PlanSize{DecodeTPRanks: len(p.verdict.DecodeRanks)}
	for _, d := range p.verdict.DecodeRanks {
		size.Targets += int64(len(d.Targets))
	}
	return size, nil
}

// Map is the prefill ranks each decode rank sends its transfer info to.
func (p *pair) Map() (engine.RankMap, error) {
	if err := p.refusal(); err != nil {
		return nil, err
	}
	m := &engine.TargetMap{Layout: transferplan.LayoutRecord{
		TokensPerPage: p.rules.Decode.PageSize,
		Prefill:       transferplan.Parallelism{TPSize: p.rules.Prefill.TP, DPSize: max(1, p.rules.Prefill.DP)},
		Decode:        transferplan.Parallelism{TPSize: p.rules.Decode.TP, DPSize: max(1, p.rules.Decode.DP)},
	}}
	for _, d := range p.verdict.DecodeRanks {
		r := engine.MappedRank{DecodeTPRank: d.DecodeTPRank, RequiredPrefillResponseNum: d.RequiredPrefillResponseNum}
		for _, t := range d.Targets {
			r.Targets = append(r.Targets, transferplan.PlanTarget{PrefillTPRank: t.PrefillTPRank, IsDummy: t.IsDummy, RequiredDstInfoNum: d.RequiredDstInfoNum,
				Fragments: []transferplan.TransferFragment{}})
		}
		m.Ranks = append(m.Ranks, r)
	}
	return m, nil
}

// refusal is the verdict's refusal as the LayoutError the controller and
// the CLI report.
func (p *pair) refusal() error {
	r := p.verdict.Refusal
	if r == nil {
		return nil
	}
	return &transferplan.LayoutError{Reason: transferplan.Reason(r.Reason), Field: engine.SpecField(r.Field), Message: "SGLang: " + r.Message, Fix: r.Fix}
}

func (p *pair) DescribeCompatible(transferplan.Summary) string {
	return fmt.Sprintf("SGLang (%s) serves prefill TP %d DP %d → decode TP %d DP %d (attention TP %d → %d, page %d)",
		p.rules.Backend, p.rules.Prefill.TP, max(1, p.rules.Prefill.DP), p.rules.Decode.TP, max(1, p.rules.Decode.DP),
		p.rules.Prefill.AttnTP(), p.rules.Decode.AttnTP(), p.rules.Decode.PageSize)
}

func (p *pair) DescribeOverBudget(transferplan.PlanSize) string {
	return p.DescribeCompatible(transferplan.Summary{})
}

// Reasons are the reasons the engine refuses a pair with, as the
// controller's LayoutCompatible reasons.
func Reasons() []transferplan.Reason {
	var out []transferplan.Reason
	for _, r := range rules.Reasons() {
		out = append(out, transferplan.Reason(r))
	}
	return out
}
