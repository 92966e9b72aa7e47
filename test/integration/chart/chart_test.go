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

package chart

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// The release the comparisons install: with this name and namespace the
// chart's object names are config/default's.
const (
	release   = "pdtopo"
	namespace = "pdtopo-system"
)

const (
	managerRepo, managerTag = "registry.example:5000/team/manager", "v1.2.3"
	agentRepo, agentTag     = "registry.example:5000/team/receiver-agent", "v1.2.3"
)

// chartOnly is the metadata only one of the two install paths writes, and
// why; the comparison removes it from both sides. Everything else must be
// equal.
var chartOnly = struct{ labels, annotations []string }{
	labels: []string{
		"app.kubernetes.io/managed-by", // "Helm" or "kustomize"
		"app.kubernetes.io/version",    // the chart's appVersion
		"helm.sh/chart",                // the chart's name and version
	},
	annotations: []string{
		"helm.sh/resource-policy", // crds.keep: helm uninstall leaves the CRD
	},
}

// imagesValues sets both images as the kustomize overlay below does.
func imagesValues() map[string]any {
	return map[string]any{
		"image":      map[string]any{"repository": managerRepo, "tag": managerTag},
		"agentImage": map[string]any{"repository": agentRepo, "tag": agentTag},
	}
}

// overlay writes a kustomization over a directory of config/ that sets the images the
// way `make build-installer` does, and returns its directory.
func overlay(t *testing.T, root, base, ns string) string {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, filepath.Join(root, "config", base))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: ghcr.io/pdtopo/manager
  newName: %s
  newTag: %s
- name: ghcr.io/pdtopo/receiver-agent
  newName: %s
  newTag: %s
`, filepath.ToSlash(rel), managerRepo, managerTag, agentRepo, agentTag)
	if ns != "" {
		k += "namespace: " + ns + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// normalize removes chartOnly's metadata (and maps it leaves empty).
func normalize(u unstructured.Unstructured) unstructured.Unstructured {
	u = *u.DeepCopy()
	for _, f := range []struct {
		keys []string
		get  func() map[string]string
		set  func(map[string]string)
	}{
		{chartOnly.labels, u.GetLabels, u.SetLabels},
		{chartOnly.annotations, u.GetAnnotations, u.SetAnnotations},
	} {
		m := f.get()
		for _, k := range f.keys {
			delete(m, k)
		}
		if len(m) == 0 {
			m = nil
		}
		f.set(m)
	}
	return u
}

// TestChartMatchesKustomize renders the chart and config/'s kustomizations
// for the same settings and requires the same objects, field for field,
// apart from chartOnly's metadata: the two install paths cannot drift.
func TestChartMatchesKustomize(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	watched := []string{"team-a", "team-b"}
	for _, c := range []struct {
		name string
		// values on top of imagesValues.
		values map[string]any
		// kustomize: the config/ directories the chart must equal, and the
		// namespaces to apply each to ("" for its own).
		kustomize []struct{ dir, ns string }
		// onlyKustomize are objects the chart leaves out on purpose.
		onlyKustomize []string
		// pick limits the comparison to the chart objects of these kinds
		// (nil: every object must have a kustomize twin).
		pick []string
	}{
		{
			name:      "defaults are config/default",
			kustomize: []struct{ dir, ns string }{{"default", ""}},
			// helm install --create-namespace (or the user) owns the
			// release namespace: a chart must not create its own.
			onlyKustomize: []string{"Namespace pdtopo-system"},
		},
		{
			name: "monitors are config/prometheus",
			values: map[string]any{"metrics": map[string]any{"enabled": true,
				"serviceMonitor":  map[string]any{"enabled": true},
				"agentPodMonitor": map[string]any{"enabled": true}}},
			kustomize: []struct{ dir, ns string }{{"prometheus", ""}},
			pick:      []string{"ServiceMonitor", "PodMonitor"},
		},
		{
			name:      "namespaced mode is config/namespaced in every watched namespace",
			values:    map[string]any{"watchNamespaces": watched},
			kustomize: []struct{ dir, ns string }{{"namespaced", watched[0]}, {"namespaced", watched[1]}},
			// The chart's own Roles in its namespace (leader election, the
			// rotator's Secret) are config/default's, compared above.
			pick: []string{"Role", "RoleBinding"},
		},
		{
			name:      "the network policy is config/networkpolicy in every decode namespace",
			values:    map[string]any{"networkPolicy": map[string]any{"enabled": true, "namespaces": watched}},
			kustomize: []struct{ dir, ns string }{{"networkpolicy", watched[0]}, {"networkpolicy", watched[1]}},
			pick:      []string{"NetworkPolicy"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			values := imagesValues()
			for k, v := range c.values {
				values[k] = v
			}
			chart := map[string]unstructured.Unstructured{}
			for _, o := range helmchart.Render(t, release, namespace, values) {
				if c.pick != nil && !slices.Contains(c.pick, o.GetKind()) {
					continue
				}
				if c.pick != nil && o.GetNamespace() == namespace && (o.GetKind() == "Role" || o.GetKind() == "RoleBinding") {
					continue // config/default's, compared in the first case
				}
				if _, dup := chart[helmchart.Key(o)]; dup {
					t.Fatalf("the chart renders %s twice", helmchart.Key(o))
				}
				chart[helmchart.Key(o)] = o
			}
			kust := map[string]unstructured.Unstructured{}
			for _, k := range c.kustomize {
				for _, o := range helmchart.Kustomize(t, kubectl, overlay(t, root, k.dir, k.ns)) {
					kust[helmchart.Key(o)] = o
				}
			}
			if len(kust) == 0 || len(chart) == 0 {
				t.Fatalf("nothing to compare: %d chart objects, %d kustomize objects", len(chart), len(kust))
			}
			for key, want := range kust {
				got, ok := chart[key]
				switch {
				case slices.Contains(c.onlyKustomize, key):
					if ok {
						t.Errorf("the chart renders %s, which it should leave out", key)
					}
				case !ok:
					t.Errorf("kustomize has %s, the chart has not (chart: %v)", key, slices.Sorted(maps.Keys(chart)))
				case !equality.Semantic.DeepEqual(normalize(got).Object, normalize(want).Object):
					t.Errorf("%s differs between the chart and kustomize:\n%s", key, lineDiff(t, normalize(want), normalize(got)))
				}
			}
			for key := range chart {
				if _, ok := kust[key]; !ok {
					t.Errorf("the chart renders %s, which kustomize has not", key)
				}
			}
		})
	}
}

// lineDiff shows the lines of want's and got's YAML that are not in the
// other, marked - (kustomize) and + (chart).
func lineDiff(t *testing.T, want, got unstructured.Unstructured) string {
	t.Helper()
	w, err := yaml.Marshal(want.Object)
	if err != nil {
		t.Fatal(err)
	}
	g, err := yaml.Marshal(got.Object)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(w), "\n"), strings.Split(string(g), "\n")
	var b strings.Builder
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(the same lines in another order)\n--- kustomize\n" + string(w) + "--- chart\n" + string(g)
	}
	return b.String()
}
