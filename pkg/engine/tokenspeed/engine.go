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
	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
)

// Name is the engine's name.
const Name = "tokenspeed"

// Engine is tokenspeed's engine.Engine.
type Engine struct{}

var _ engine.Engine = Engine{}

// New is tokenspeed's engine.
func New() Engine { return Engine{} }

// Name is "tokenspeed".
func (Engine) Name() string { return Name }

// InjectsAgent: the receiver agent plays tokenspeed's decode side of the
// KV handshake beside every decode engine rank.
func (Engine) InjectsAgent() bool { return true }

// ReadsContracts: a pair on the CacheContract wire is judged from both
// roles' cache contracts; a v1 pair from the geometry its spec gives.
func (Engine) ReadsContracts(spec pdv1.PDPairSpec) bool {
	return spec.WireOrDefault() == pdv1.WireCacheContract
}

// ReadContracts reads and decodes a contract pair's two contracts.
func (Engine) ReadContracts(spec pdv1.PDPairSpec, read engine.ContractReader) (engine.Contracts, error) {
	cp, roles, err := ContractPairFromSpec(spec, read)
	return &contracts{spec: spec, pair: cp, roles: roles}, err
}

// Resolve is the pair on the wire its spec names: on the CacheContract
// wire from in.Contracts, or, when in holds none (offline: the validator,
// the CLI), from the spec's inline contracts; on v1 from its geometry
// (derived from spec.model when the spec gives a model).
func (e Engine) Resolve(spec pdv1.PDPairSpec, in engine.Inputs) (engine.Pair, error) {
	if e.ReadsContracts(spec) {
		c, ok := in.Contracts.(*contracts)
		if !ok {
			var err error
			if c, err = readInline(spec); err != nil {
				return nil, err
			}
		}
		return &contractPair{in: c}, nil
	}
	p, err := resolveLayout(spec, in.ModelConfig)
	if p == nil {
		return nil, err
	}
	return p, err
}

// Advise ranks the model's layouts by what their transfers cost on the v1
// wire (pkg/modelplan).
func (Engine) Advise(q engine.AdviceQuery) []modelplan.Row {
	return modelplan.Advise(q.Model, q.Base, q.MLAL15Cache, q.Prefill, q.Decode, q.Budget)
}
