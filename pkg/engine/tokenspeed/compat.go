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
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// What follows is the API cmd/pdtopo still calls (the moved pairlayout's),
// until the CLI asks engine.Engine like the operator does; it goes then.

// Resolved is a v1 PDPair spec ready to plan.
type Resolved struct {
	Layout   planv1.Layout
	Explicit pdv1.PDPairSpec
	Derived  *pdv1.DerivedBuffers
	pair     *layoutPair
}

// Resolve turns a v1 spec into the planner's input.
func Resolve(spec pdv1.PDPairSpec, config []byte) (*Resolved, error) {
	p, err := resolveLayout(spec, config)
	if p == nil {
		return nil, err
	}
	return &Resolved{Layout: p.layout, Explicit: p.explicit, Derived: p.derived, pair: p}, err
}

// Explain gives a planner refusal of a model-aware pair the model's fix.
func (r *Resolved) Explain(err error) error {
	if r == nil {
		return err
	}
	return r.pair.explain(err)
}

// IsContractPair reports whether the spec names the cache-contract wire.
func IsContractPair(spec pdv1.PDPairSpec) bool { return New().ReadsContracts(spec) }

// ReadInline is engine.ReadInline.
func ReadInline(role string, src *pdv1.CacheContractSource) ([]byte, string, error) {
	return engine.ReadInline(role, src)
}

// ReasonContractUnavailable is engine.ReasonContractUnavailable.
const ReasonContractUnavailable = engine.ReasonContractUnavailable

// IsInputError is engine.IsInputError.
func IsInputError(err error) bool { return engine.IsInputError(err) }
