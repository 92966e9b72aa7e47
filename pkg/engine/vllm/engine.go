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
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/vllm/rules"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Name is the engine's name, as spec.engine.name gives it.
const Name = string(pdv1.EngineVLLM)

// Engine is vLLM's engine.Engine.
type Engine struct{ engine.SelfTransferring }

var _ engine.Engine = Engine{}

// New is vLLM's engine.
func New() Engine { return Engine{} }

// Name is "vllm".
func (Engine) Name() string { return Name }

// Resolve judges the pair by vLLM's rules.
func (Engine) Resolve(spec pdv1.PDPairSpec, in engine.Inputs) (engine.Pair, error) {
	cfg, err := engine.ReadHFConfig(spec, in)
	if err != nil {
		return nil, err
	}
	return judge(spec, cfg), nil
}

// judge is the pair as the rules judge and cost it.
func judge(spec pdv1.PDPairSpec, cfg *engine.HFConfig) *pair {
	rp := rules.Pair{
		Model:       model(cfg),
		Prefill:     role(spec, spec.Prefill),
		Decode:      role(spec, spec.Decode),
		KVConnector: string(spec.KVConnectorOrDefault()),
	}
	v, c := rules.Assess(rp)
	return &pair{spec: spec, rules: rp, verdict: v, cost: c}
}

// Advise ranks the layouts by rules.Assess, in rules.Rank's order.
func (Engine) Advise(q engine.AdviceQuery) []modelplan.Row {
	return engine.AdviseBySpec(q, func(spec pdv1.PDPairSpec, cfg *engine.HFConfig) engine.Assessed { return judge(spec, cfg) })
}

// model is the geometry vLLM's rules read, from the config.
func model(c *engine.HFConfig) rules.Model {
	m := c.Model
	types := c.LayerTypes()
	out := rules.Model{
		NumHiddenLayers:       c.Int("num_hidden_layers"),
		NumAttentionHeads:     int(m.AttentionHeads),
		NumKVHeads:            int(m.KVHeads),
		HeadDim:               int(m.HeadDim),
		UseMLA:                m.Family == modelgeom.FamilyMLA,
		KVLoraRank:            c.Int("kv_lora_rank"),
		QKRopeHeadDim:         c.Int("qk_rope_head_dim"),
		HasMamba:              m.MambaLayers > 0 || types["linear_attention"] > 0,
		FullAttentionInterval: c.Int("full_attention_interval"),
	}
	if types["sliding_attention"] > 0 {
		out.SlidingWindow = c.Int("sliding_window")
	}
	return out
}

// role is one side as vLLM is started on it.
func role(spec pdv1.PDPairSpec, r pdv1.FleetLayout) rules.Role {
	return rules.Role{
		TP:            int(r.TensorParallelSize),
		BlockSize:     int(spec.RoleTokensPerPage(r)),
		KVCacheLayout: rules.Layout(r.KVCacheLayout),
		KVCacheDtype:  spec.RoleKVCacheDtype(r),
		Version:       r.EngineVersion,
	}
}

// pair is one PDPair as vLLM's rules judged it.
type pair struct {
	spec    pdv1.PDPairSpec
	rules   rules.Pair
	verdict rules.Verdict
	cost    rules.Cost
}

var _ engine.Pair = (*pair)(nil)

// Cost is what the pair's transfers cost, zero when refused.
func (p *pair) Cost() engine.Cost { return p.cost }

func (p *pair) Derived() *pdv1.DerivedBuffers { return nil }

func (p *pair) Explicit() pdv1.PDPairSpec { return p.spec }

// Size counts the mapping's targets by vLLM's formula (a decode rank
// handshakes with max(1, prefill TP / decode TP) prefill ranks) and
// checks the JSON pdtopo plan would print against the budget; nothing is
// mapped.
func (p *pair) Size(budget transferplan.Budget) (transferplan.PlanSize, error) {
	if err := p.Refusal(); err != nil {
		return transferplan.PlanSize{}, err
	}
	P, D := int64(p.rules.Prefill.TP), int64(p.rules.Decode.TP)
	return engine.SizeTargets(engine.TargetCounts{
		DecodeRanks: D, TargetsPerRank: max(1, P/D), ReadsPerRank: int64(p.cost.ReadsPerDecodeRank),
		MaxDecodeRank: D, MaxPrefillRank: P, MaxResponses: max(1, D/P, P/D),
	}, budget)
}

// Reads is what advise reports of the mapping: vLLM's holds max(prefill
// TP, decode TP) targets in all, so it is read from the mapping.
func (p *pair) Reads() (int, []int) {
	return p.TargetMap().Reads(p.rules.Prefill.TP)
}

// Map is the prefill ranks each decode rank handshakes with and reads.
func (p *pair) Map() (engine.RankMap, error) {
	if err := p.Refusal(); err != nil {
		return nil, err
	}
	return p.TargetMap(), nil
}

// TargetMap is a compatible verdict's mapping.
func (p *pair) TargetMap() *engine.TargetMap {
	m := &engine.TargetMap{Layout: transferplan.LayoutRecord{
		TokensPerPage: p.rules.Decode.BlockSize,
		Prefill:       transferplan.Parallelism{TPSize: p.rules.Prefill.TP, DPSize: 1},
		Decode:        transferplan.Parallelism{TPSize: p.rules.Decode.TP, DPSize: 1},
	}}
	for _, d := range p.verdict.DecodeRanks {
		r := engine.MappedRank{DecodeTPRank: d.DecodeTPRank}
		for _, t := range d.Targets {
			r.Targets = append(r.Targets, transferplan.PlanTarget{PrefillTPRank: t.PrefillTPRank, IsDummy: t.IsDummy, RequiredDstInfoNum: p.verdict.LocalConsumers,
				Fragments: []transferplan.TransferFragment{}})
		}
		m.Ranks = append(m.Ranks, r)
	}
	return m
}

// Refusal is the verdict's refusal as the LayoutError the controller and
// the CLI report.
func (p *pair) Refusal() error {
	r := p.verdict.Refusal
	if r == nil {
		return nil
	}
	return &transferplan.LayoutError{Reason: transferplan.Reason(r.Reason), Field: engine.SpecField(r.Field), Message: "vLLM: " + r.Message, Fix: r.Fix}
}

func (p *pair) DescribeCompatible(transferplan.Summary) string {
	return fmt.Sprintf("vLLM NixlConnector serves prefill TP %d → decode TP %d (block %d → %d); assumes %d conditions pdtopo cannot see: %v",
		p.rules.Prefill.TP, p.rules.Decode.TP, p.rules.Prefill.BlockSize, p.rules.Decode.BlockSize, len(p.verdict.Conditions), p.verdict.Conditions)
}

func (p *pair) DescribeOverBudget(s transferplan.PlanSize) string {
	return fmt.Sprintf("%s; %d decode ranks, %d targets (sized, not mapped: the mapping is over the plan budget)",
		p.DescribeCompatible(transferplan.Summary{}), s.DecodeTPRanks, s.Targets)
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
