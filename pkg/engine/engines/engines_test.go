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

package engines_test

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A spec that names no engine is tokenspeed's, on both of its wires, and
// tokenspeed's decode pods run the receiver agent.
func TestASpecNamingNoEngineIsTokenspeeds(t *testing.T) {
	for _, wire := range []pdv1.Wire{"", pdv1.WireV1, pdv1.WireCacheContract} {
		spec := fixtures.Llama70B(8, 4)
		spec.Wire = wire
		eng := engines.For(spec)
		if eng.Name() != "tokenspeed" || !eng.InjectsAgent() {
			t.Errorf("wire %q: engine %s (agent %v), want tokenspeed with its agent", wire, eng.Name(), eng.InjectsAgent())
		}
		if got, want := eng.ReadsContracts(spec), wire == pdv1.WireCacheContract; got != want {
			t.Errorf("wire %q: reads contracts %v, want %v", wire, got, want)
		}
	}
	if e, ok := engines.Lookup("tokenspeed"); !ok || e.Name() != "tokenspeed" {
		t.Errorf("Lookup(tokenspeed) = %v, %v", e, ok)
	}
	if _, ok := engines.Lookup("trtllm"); ok {
		t.Error("Lookup(trtllm) found an engine nobody registered")
	}
}

// A spec naming vllm or sglang is judged by that engine, whose own
// connector moves the bytes: no agent is injected.
func TestASpecNamingAnEngineIsItsOwn(t *testing.T) {
	for _, name := range []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang, pdv1.EngineTokenspeed} {
		spec := fixtures.Llama70B(8, 4)
		spec.Engine = &pdv1.EngineSpec{Name: name}
		eng := engines.For(spec)
		if eng.Name() != string(name) || eng.InjectsAgent() != (name == pdv1.EngineTokenspeed) {
			t.Errorf("engine %s: got %s (agent %v)", name, eng.Name(), eng.InjectsAgent())
		}
		if e, ok := engines.Lookup(string(name)); !ok || e.Name() != string(name) {
			t.Errorf("Lookup(%s) = %v, %v", name, e, ok)
		}
	}
}

// Adding an engine is one line in a registry: the new one is found by its
// name beside the others, and its name may be taken only once.
func TestARegistryHoldsEachEngineOnce(t *testing.T) {
	tokenspeed, _ := engines.Lookup("tokenspeed")
	r := engine.NewRegistry(tokenspeed, fixtures.ToyEngine{})
	if got := r.Names(); !slices.Equal(got, []string{"tokenspeed", "toy"}) {
		t.Errorf("names %v", got)
	}
	if e, ok := r.Lookup("toy"); !ok || e.InjectsAgent() {
		t.Errorf("Lookup(toy) = %v, %v", e, ok)
	}
	if e, _ := r.Lookup(""); e.Name() != "tokenspeed" {
		t.Errorf("the fallback is %s", e.Name())
	}
	defer func() {
		if recover() == nil {
			t.Error("two engines of one name were registered")
		}
	}()
	engine.NewRegistry(tokenspeed, tokenspeed)
}

// vLLM's and SGLang's advice judges every layout from the query's spec;
// a spec whose model cannot be read refuses every row with the reason and
// the fix, rather than ranking layouts of no model.
func TestEngineAdviceWithoutAModel(t *testing.T) {
	layouts := []modelgeom.Role{{TP: 2, DP: 1}, {TP: 4, DP: 1}}
	for _, name := range []pdv1.EngineName{pdv1.EngineVLLM, pdv1.EngineSGLang} {
		eng, _ := engines.Lookup(string(name))
		for _, model := range []*pdv1.ModelSpec{nil, {HFConfig: &runtime.RawExtension{Raw: []byte(`{"num_attention_heads": 0}`)}}} {
			spec := pdv1.PDPairSpec{Engine: &pdv1.EngineSpec{Name: name}, Model: model}
			rows := eng.Advise(engine.AdviceQuery{Spec: spec, Prefill: layouts, Decode: layouts})
			if len(rows) != 4 {
				t.Fatalf("%s: %d rows, want 4", name, len(rows))
			}
			for _, r := range rows {
				if r.Compatible || r.Reason == "" || r.Fix == "" {
					t.Errorf("%s, model %v: row %+v, want refused with a fix", name, model, r)
				}
			}
		}
	}
}
