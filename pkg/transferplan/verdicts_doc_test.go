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

package transferplan_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// verdictsPage lists every reason LayoutCompatible=False can carry.
var verdictsPage = filepath.Join("..", "..", "docs", "layout-verdicts.md")

// heading is a reason's section: "### `Reason`".
var heading = regexp.MustCompile("(?m)^### `([A-Za-z0-9]+)`\\s*$")

// Every reason the planner, the model derivation or the operator can put in
// LayoutCompatible=False has a section on docs/layout-verdicts.md saying what
// it means and what to change; the page has no section for a reason nobody
// sets. A reason added to any of those lists fails here until documented.
func TestVerdictsPageListsEveryReason(t *testing.T) {
	page, err := os.ReadFile(verdictsPage)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range transferplan.Reasons() {
		want[string(r)] = "transferplan.Reasons()"
	}
	for _, r := range modelgeom.Reasons() {
		want[string(r)] = "modelgeom.Reasons()"
	}
	// The operator's own: the planner failing without a reason, a model
	// ConfigMap it cannot read.
	want[string(pdv1.ReasonPlanningFailed)] = "the operator"
	want[string(pdv1.ReasonModelConfigUnavailable)] = "the operator"

	text := string(page)
	locs := heading.FindAllStringSubmatchIndex(text, -1)
	seen := map[string]bool{}
	for i, loc := range locs {
		name := text[loc[2]:loc[3]]
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := text[loc[1]:end]
		if next := strings.Index(body, "\n## "); next >= 0 {
			body = body[:next]
		}
		if seen[name] {
			t.Errorf("%s has two sections", name)
		}
		seen[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("the page documents %s, which no list of reasons holds", name)
		}
		if !strings.Contains(body, "**Means.**") || !strings.Contains(body, "**Fix.**") {
			t.Errorf("the section of %s must say what it means (**Means.**) and what to change (**Fix.**)", name)
		}
	}
	for name, from := range want {
		if !seen[name] {
			t.Errorf("%s (from %s) has no section on %s", name, from, verdictsPage)
		}
	}
}
