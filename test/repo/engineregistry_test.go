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

package repo

import (
	"strings"
	"testing"
)

// registry is the one package that imports engine implementations.
const registry = "pkg/engine/engines"

// engineTestPeers are test equipment that plays one engine's side of its
// wire and so imports that engine: the prefill peer is tokenspeed's prefill.
var engineTestPeers = map[string]string{
	"cmd/prefill-peer": "pkg/engine/tokenspeed",
	// The chaos suite runs tokenspeed prefill peers for its pairs.
	"test/chaos": "pkg/engine/tokenspeed",
}

// engineImportAllowed reports whether a package in directory from may
// import the module package in directory to, as far as engines go: an
// engine implementation (pkg/engine/<name> and below) is imported by the
// registry, by itself and by its test peers, never by the operator, the
// webhooks, the CLI or internal/, which ask the engine.Engine interface.
func engineImportAllowed(from, to string) bool {
	name, ok := strings.CutPrefix(to, "pkg/engine/")
	if !ok {
		return true
	}
	name, _, _ = strings.Cut(name, "/")
	impl := "pkg/engine/" + name
	switch {
	case impl == registry:
		return true
	case from == registry, from == impl, strings.HasPrefix(from, impl+"/"):
		return true
	}
	return engineTestPeers[from] == impl
}

// Only the registry lists engines: adding one is a package and a line
// there (docs/design.md#adding-an-engine).
func TestOnlyTheRegistryImportsEngines(t *testing.T) {
	pkgs := goPackages(t, repoRoot(t))
	if _, ok := pkgs[registry]; !ok {
		t.Fatalf("%s not found", registry)
	}
	for dir, imports := range pkgs {
		for _, imp := range imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if ok && !engineImportAllowed(dir, rel) {
				t.Errorf("%s imports %s: only %s imports engine implementations; ask engine.Engine (engines.For) instead", dir, rel, registry)
			}
		}
	}
}

// The rule itself, on imports the repository must never have.
func TestEngineImportRules(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"pkg/engine/engines", "pkg/engine/tokenspeed", true},
		{"pkg/engine/engines", "pkg/engine/vllm", true},
		{"controllers", "pkg/engine/engines", true},
		{"controllers", "pkg/engine", true},
		{"pkg/engine/tokenspeed", "pkg/engine", true},
		{"pkg/engine/tokenspeed/x", "pkg/engine/tokenspeed", true},
		{"cmd/prefill-peer", "pkg/engine/tokenspeed", true},
		{"controllers", "pkg/engine/tokenspeed", false},
		{"webhooks", "pkg/engine/tokenspeed", false},
		{"cmd/pdtopo", "pkg/engine/tokenspeed/x", false},
		{"internal/localcp", "pkg/engine/sglang", false},
		{"pkg/engine/vllm", "pkg/engine/tokenspeed", false},
		{"cmd/prefill-peer", "pkg/engine/vllm", false},
	} {
		if got := engineImportAllowed(c.from, c.to); got != c.ok {
			t.Errorf("engineImportAllowed(%s, %s) = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}
