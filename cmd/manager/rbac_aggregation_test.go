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

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// config/default aggregates PDPair writes into the built-in admin role and
// not into edit (a PDPair makes the manager connect where its author
// says); the component config/components/pdpair-edit-aggregation adds edit.
func TestPDPairWritesNotAggregatedIntoEdit(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	_, err = os.Stat(kubectl)
	testutil.RequireTool(t, err, testutil.SkipEnv, "kubectl kustomize renders config/default (make kubectl; make test builds it)")
	overlay := t.TempDir()
	rel := func(p string) string {
		r, err := filepath.Rel(overlay, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kustomization := "resources:\n- " + rel("config/default") + "\ncomponents:\n- " + rel("config/components/pdpair-edit-aggregation") + "\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, wantEdit := range map[string]bool{filepath.Join(root, "config", "default"): false, overlay: true} {
		out, err := exec.Command(kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", dir).Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", dir, err)
		}
		var editor *rbacv1.ClusterRole
		for _, doc := range bytes.Split(out, []byte("\n---\n")) {
			var role rbacv1.ClusterRole
			if yaml.Unmarshal(doc, &role) == nil && role.Kind == "ClusterRole" && role.Name == "pdtopo-pdpair-editor-role" {
				editor = &role
			}
		}
		if editor == nil {
			t.Fatalf("%s renders no pdtopo-pdpair-editor-role", dir)
		}
		l := editor.Labels
		if got := l["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"; got != wantEdit || l["rbac.authorization.k8s.io/aggregate-to-admin"] != "true" {
			t.Errorf("%s: the editor role's labels %v; want aggregate-to-edit %v and aggregate-to-admin", dir, l, wantEdit)
		}
	}
}

// --bootstrap-address-allowlist: empty by default (every address), its
// entries parsed, a bad one refused at start naming the flag.
func TestBootstrapAllowlistFlag(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil || !o.bootstrapPolicy.Empty() {
		t.Fatalf("default: %v, %v", o.bootstrapPolicy, err)
	}
	o, err = parseFlags([]string{"--bootstrap-address-allowlist=10.0.0.0/8, llm/llama-prefill,serving/*"})
	if err != nil || o.bootstrapPolicy.String() != "10.0.0.0/8,llm/llama-prefill,serving/*" {
		t.Fatalf("%v, %v", o.bootstrapPolicy, err)
	}
	if _, err := parseFlags([]string{"--bootstrap-address-allowlist=10.0.0.0/40"}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("--bootstrap-address-allowlist")) {
		t.Fatalf("a bad entry: %v", err)
	}
}
