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
	"fmt"
	"slices"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// Registry holds the engines pdtopo knows, by name. pkg/engine/engines
// holds the one the binaries use; tests build their own.
type Registry struct {
	byName map[string]Engine
	// fallback is the engine of a spec that names none.
	fallback Engine
}

// NewRegistry holds fallback, the engine of a spec that names none, and
// the others. Two engines of one name are a programming error.
func NewRegistry(fallback Engine, others ...Engine) *Registry {
	r := &Registry{byName: map[string]Engine{}, fallback: fallback}
	for _, e := range append([]Engine{fallback}, others...) {
		if _, dup := r.byName[e.Name()]; dup {
			panic(fmt.Sprintf("engine: two engines named %q", e.Name()))
		}
		r.byName[e.Name()] = e
	}
	return r
}

// Lookup is the engine of the given name; "" names the fallback.
func (r *Registry) Lookup(name string) (Engine, bool) {
	if name == "" {
		return r.fallback, true
	}
	e, ok := r.byName[name]
	return e, ok
}

// For is the engine a pair's spec chooses (spec.engine.name); a spec that
// names none, or an engine this registry does not hold, is the fallback's.
func (r *Registry) For(spec pdv1.PDPairSpec) Engine {
	if spec.Engine == nil {
		return r.fallback
	}
	if e, ok := r.byName[string(spec.Engine.Name)]; ok {
		return e
	}
	return r.fallback
}

// Names are the engines' names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
