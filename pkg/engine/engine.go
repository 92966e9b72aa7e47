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

package engine

import (
	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Engine is one serving engine's rules for the pairs it serves. Refusals
// are *transferplan.LayoutError values: a reason the controller maps to the
// LayoutCompatible condition without reading text, the field to change and
// a message that ends with the fix.
type Engine interface {
	// Name is the engine's name, as a PDPair names it.
	Name() string
	// InjectsAgent reports whether the decode pods of the engine's pairs run
	// pdtopo's receiver agent beside the engine (the agent loads the plans
	// the operator publishes), so the webhook injects it.
	InjectsAgent() bool
	// ReadsContracts reports whether the pair's verdict is made from both
	// roles' cache contracts as the engines state them: the caller then
	// reads them (inline, from ConfigMaps or from the live engines) and
	// gives them to ReadContracts before Resolve.
	ReadsContracts(spec pdv1.PDPairSpec) bool
	// ReadContracts checks the spec's contract fields, reads both roles'
	// contracts with read and decodes them as the engine does. A contract
	// that cannot be had or used is a *transferplan.LayoutError; the
	// Contracts returned beside it hold the roles read before it.
	ReadContracts(spec pdv1.PDPairSpec, read ContractReader) (Contracts, error)
	// Resolve derives the pair's geometry from its spec and what the
	// caller read for it. A spec the engine cannot use, or a model it
	// cannot derive buffers for, is a *transferplan.LayoutError; the Pair
	// beside it, when there is one, is for its Derived and Explicit only.
	Resolve(spec pdv1.PDPairSpec, in Inputs) (Pair, error)
	// Advise judges the model at every combination of the candidate
	// layouts and returns them ranked, cheapest first.
	Advise(q AdviceQuery) []modelplan.Row
}

// Inputs are what the caller read for a pair beyond its spec.
type Inputs struct {
	// ModelConfig is the config.json spec.model.configMapKeyRef names, as
	// read from the ConfigMap; nil when it was not read (the spec gives
	// hfConfig inline, gives its buffers, or the caller is offline).
	ModelConfig []byte
	// Contracts are the pair's contracts as ReadContracts gave them, for an
	// engine that ReadsContracts the spec.
	Contracts Contracts
}

// Pair is one PDPair as its engine sees it: the geometry derived, ready to
// be sized and mapped.
type Pair interface {
	// Derived is what was derived from spec.model, for the status; nil
	// for pairs that give their buffers.
	Derived() *pdv1.DerivedBuffers
	// Explicit is the spec with what was derived in place of spec.model
	// (every size given), or the spec itself.
	Explicit() pdv1.PDPairSpec
	// Size computes the size of the pair's plans arithmetically, without
	// mapping a rank, and checks it against the budget: past it, a
	// *transferplan.BudgetError beside the size; a refusal of the layout
	// is a *transferplan.LayoutError.
	Size(budget transferplan.Budget) (transferplan.PlanSize, error)
	// Map maps every decode rank to the prefill ranks it pulls from, or
	// refuses the pair (a *transferplan.LayoutError with the fix).
	Map() (RankMap, error)
	// DescribeCompatible is LayoutCompatible's message for a mapped pair
	// whose plans summarise as s.
	DescribeCompatible(s transferplan.Summary) string
	// DescribeOverBudget is LayoutCompatible's message for a pair whose
	// plans were sized as s and not computed: they are over the budget.
	DescribeOverBudget(s transferplan.PlanSize) string
}

// RankMap is a compatible pair's mapping of decode ranks to prefill ranks.
type RankMap interface {
	// DecodeRanks is the number of decode TP ranks mapped.
	DecodeRanks() int
	// PrefillRanks are the prefill TP ranks decode TP rank d pulls from.
	PrefillRanks(d int) ([]int, error)
	// Plans are the route plans the engine's agent loads, nil for an
	// engine whose agent consumes none.
	Plans() Plans
}

// Plans are a mapped pair's route plans, computed one decode rank at a
// time.
type Plans interface {
	// Record is the layout the plans are published with.
	Record() transferplan.LayoutRecord
	// Encode plans and encodes one decode rank at a time into the
	// ConfigMap form, passing each plan to each (the whole set is never in
	// memory).
	Encode(name string, each func(*transferplan.RoutePlan)) ([]planstore.Object, error)
	// PlanSet is every decode rank's plan in memory.
	PlanSet() (*transferplan.PlanSet, error)
}

// AdviceQuery is a model and the layouts of both fleets to rank it at.
type AdviceQuery struct {
	// Spec is the pair whose layouts vary, as a PDPair would give it: the
	// engine and its connector, the model (spec.model.hfConfig), the page
	// sizes, dtypes and the engine's per-role settings. Each candidate
	// replaces its roles' tensorParallelSize and dataParallelSize. The
	// engines that judge a pair from its spec alone (vLLM, SGLang) read it.
	Spec  pdv1.PDPairSpec
	Model *modelgeom.Model
	// Base gives the KV cache dtype, the page size and the draft layers;
	// its roles are replaced by each candidate.
	Base modelgeom.Options
	// MLAL15Cache: the prefill runs the MLA L1.5 cache.
	MLAL15Cache     bool
	Prefill, Decode []modelgeom.Role
	Budget          transferplan.Budget
}
