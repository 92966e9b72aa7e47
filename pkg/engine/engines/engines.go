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

// Package engines lists the engines pdtopo judges pairs for. It is the one
// package that imports engine implementations; everything else asks For
// the engine of a pair and talks to the engine.Engine interface.
package engines

import (
	"slices"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/sglang"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/engine/vllm"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Registry holds every engine. The first is the engine of a spec that names
// none: tokenspeed, the reference engine. A new engine is one line here.
var Registry = engine.NewRegistry(
	tokenspeed.New(),
	vllm.New(),
	sglang.New(),
)

// For is the engine a pair's spec chooses.
func For(spec pdv1.PDPairSpec) engine.Engine { return Registry.For(spec) }

// Lookup is the engine of the given name.
func Lookup(name string) (engine.Engine, bool) { return Registry.Lookup(name) }

// Reasons are the reasons the engines besides tokenspeed refuse pairs with
// (tokenspeed's are the planner's), each once.
func Reasons() []transferplan.Reason {
	var out []transferplan.Reason
	for _, r := range append(vllm.Reasons(), sglang.Reasons()...) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
