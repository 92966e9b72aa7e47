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
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// PDPair writes are aggregated into the built-in admin role, not into
// edit, unless rbac.aggregateToEdit asks; view keeps read access. And the
// bootstrap allowlist reaches the manager's flags only when set.
func TestChartKeepsPDPairWritesOutOfEdit(t *testing.T) {
	for _, c := range []struct {
		values map[string]any
		edit   bool
	}{
		{nil, false},
		{map[string]any{"rbac": map[string]any{"aggregateToEdit": true}}, true},
	} {
		var writers, readers []string
		for _, o := range helmchart.Render(t, "pdtopo", namespace, c.values) {
			if o.GetKind() != "ClusterRole" {
				continue
			}
			l := o.GetLabels()
			switch {
			case strings.HasSuffix(o.GetName(), "pdpair-editor-role"):
				for k, v := range l {
					if v == "true" && strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
						writers = append(writers, strings.TrimPrefix(k, "rbac.authorization.k8s.io/aggregate-to-"))
					}
				}
			case strings.HasSuffix(o.GetName(), "pdpair-viewer-role"):
				if l["rbac.authorization.k8s.io/aggregate-to-view"] == "true" {
					readers = append(readers, "view")
				}
			}
		}
		slices.Sort(writers)
		want := []string{"admin"}
		if c.edit {
			want = []string{"admin", "edit"}
		}
		if !slices.Equal(writers, want) || !slices.Equal(readers, []string{"view"}) {
			t.Errorf("values %v: PDPair writes aggregated into %v (want %v), reads into %v", c.values, writers, want, readers)
		}
	}
	args := func(values map[string]any) string {
		for _, o := range helmchart.Render(t, "pdtopo", namespace, values) {
			if o.GetKind() == "Deployment" {
				b, _ := o.MarshalJSON()
				return string(b)
			}
		}
		t.Fatal("no Deployment")
		return ""
	}
	if strings.Contains(args(nil), "--bootstrap-address-allowlist") {
		t.Error("the allowlist flag is set by default")
	}
	if a := args(map[string]any{"bootstrapAddressAllowlist": []any{"10.0.0.0/8", "llm/*"}}); !strings.Contains(a, "--bootstrap-address-allowlist=10.0.0.0/8,llm/*") {
		t.Errorf("the allowlist does not reach the manager: %.300s", a)
	}
}
