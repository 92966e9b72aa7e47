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

package tokenspeed

import (
	"fmt"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// contracts are a contract pair's two contracts as read and decoded.
type contracts struct {
	spec  pdv1.PDPairSpec
	pair  plancontract.Pair
	roles [2]ContractRole
}

func (c *contracts) Roles() [2]engine.ContractRole {
	var out [2]engine.ContractRole
	for i, r := range c.roles {
		out[i] = engine.ContractRole{Raw: r.Raw, Source: r.Source}
		if r.Contract != nil {
			out[i].SHA256 = r.Contract.SHA256()
			out[i].Holds = fmt.Sprintf("groups %s, %d fields", strings.Join(r.Contract.GroupIDs(), ", "), r.Contract.FieldCount())
		}
	}
	return out
}

// readInline reads a contract pair's inline contracts, offline.
func readInline(spec pdv1.PDPairSpec) (*contracts, error) {
	cp, roles, err := ContractPairFromSpec(spec, engine.ReadInline)
	return &contracts{spec: spec, pair: cp, roles: roles}, err
}

// A contractPair is judged on the CacheContract wire, from its contracts.
type contractPair struct{ in *contracts }

var _ engine.Pair = (*contractPair)(nil)

func (p *contractPair) Derived() *pdv1.DerivedBuffers { return nil }

func (p *contractPair) Explicit() pdv1.PDPairSpec { return p.in.spec }

func (p *contractPair) Size(budget transferplan.Budget) (transferplan.PlanSize, error) {
	return plancontract.CheckBudget(p.in.pair, budget)
}

func (p *contractPair) Map() (engine.RankMap, error) {
	planner, err := plancontract.NewPlanner(p.in.pair)
	if err != nil {
		return nil, err
	}
	return &planned{planner: planner, setRecord: planner.Record()}, nil
}

func (p *contractPair) DescribeOverBudget(s transferplan.PlanSize) string {
	return fmt.Sprintf("%s: %s plans; %d fragments (sized, not planned: the plans are over the plan budget)",
		p.describe(), s.Kind, s.Fragments)
}

func (p *contractPair) DescribeCompatible(s transferplan.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s plans; each decode rank contacts %s prefill ranks; a prefill rank serves up to %d decode ranks; %d fragments",
		p.describe(), s.Kind, span(s.MinTargets, s.MaxTargets), s.MaxPrefillFanOut, s.Fragments)
	if n := len(s.IdlePrefillRanks); n > 0 {
		fmt.Fprintf(&b, "; %d prefill ranks are pulled from by no decode rank (%v): decode TP rank 0 registers with them as a dummy so their rooms complete", n, s.IdlePrefillRanks)
	}
	return b.String()
}

// describe names the TP sizes and the contracts of the pair.
func (p *contractPair) describe() string {
	pre, dec := p.in.pair.Prefill, p.in.pair.Decode
	r := p.in.roles
	return fmt.Sprintf("prefill TP %d (DP %d) → decode TP %d (DP %d) on the CacheContract wire, prefill contract %s… (%s), decode contract %s… (%s)",
		pre.TPSize, pre.DPSize, dec.TPSize, dec.DPSize, r[0].Contract.SHA256()[:12], r[0].Source, r[1].Contract.SHA256()[:12], r[1].Source)
}
