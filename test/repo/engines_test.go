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

import "testing"

// engineRules are the engines' pair rules behind pkg/engine: pure like the
// planner, so the operator, the CLI and the tests judge a pair the same way
// without a cluster.
var engineRules = []string{"pkg/engine/vllm/rules", "pkg/engine/sglang/rules"}

// The engines' pair rules know nothing of Kubernetes, the wire, sockets or
// the rest of the module.
func TestEngineRulesImportOnlyTheStandardLibrary(t *testing.T) {
	pkgs := goPackages(t, repoRoot(t))
	for _, pure := range engineRules {
		imports, ok := pkgs[pure]
		if !ok {
			t.Fatalf("%s not found", pure)
		}
		for _, imp := range imports {
			if !plannerImportAllowed(imp) {
				t.Errorf("%s imports %s", pure, imp)
			}
		}
	}
}
