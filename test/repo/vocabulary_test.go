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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conditionStatusLiteral is a condition status spelled as a string where
// metav1.ConditionTrue (False, Unknown) belongs.
var conditionStatusLiteral = regexp.MustCompile(`Status\s*(?:[!=]=|:)\s*"(?:True|False|Unknown)"|ConditionStatus\("`)

// vocabularyLiteral is a label or annotation key, or a condition type, that
// the API's vocabulary (api/v1alpha1/vocabulary.go) owns, spelled out.
var vocabularyLiteral = regexp.MustCompile(`"pd\.pdtopo\.dev/[a-z-]+"|"(?:LayoutCompatible|PlansPublished|DecodeAgentsCurrent|PlanNamesClear)"`)

// The API owns its vocabulary: no Go file outside api/ spells a condition
// status, a pd.pdtopo.dev label or annotation key, or a condition type as a
// string literal. Comments (kubebuilder markers among them) are not checked.
func TestVocabularyIsSpelledOnce(t *testing.T) {
	root := repoRoot(t)
	for _, file := range repoFiles(t, root, ".go") {
		if strings.HasPrefix(file, "api/") || strings.HasPrefix(file, "test/repo/") || inOtherModule(root, filepath.Dir(file)) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		code := stripComments(file, src)
		for _, re := range []*regexp.Regexp{conditionStatusLiteral, vocabularyLiteral} {
			for _, m := range re.FindAllString(code, -1) {
				t.Errorf("%s spells %s: use the constant of api/v1alpha1 (or metav1.ConditionTrue/False/Unknown)", file, m)
			}
		}
	}
}

// stripComments blanks a Go file's comments, keeping everything else.
func stripComments(name string, src []byte) string {
	out := []byte(string(src))
	for _, c := range comments(name, src) {
		for i := c.start; i < c.end; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	return string(out)
}

// The patterns themselves.
func TestVocabularyPatterns(t *testing.T) {
	for text, bad := range map[string]bool{
		`if c.Status == "True" {`:                     true,
		`Status: "False",`:                            true,
		`metav1.ConditionStatus("Unknown")`:           true,
		`labels["pd.pdtopo.dev/pdpair"]`:              true,
		`FindStatusCondition(cs, "LayoutCompatible")`: true,
		`if c.Status == metav1.ConditionTrue {`:       false,
		`pdv1.LabelPDPair`:                            false,
		`fmt.Println("True")`:                         false,
	} {
		got := conditionStatusLiteral.MatchString(text) || vocabularyLiteral.MatchString(text)
		if got != bad {
			t.Errorf("%s: flagged %v, want %v", text, got, bad)
		}
	}
	code := stripComments("x.go", []byte("package x // \"pd.pdtopo.dev/role\"\nvar s = 1 /* Status == \"True\" */\n"))
	if vocabularyLiteral.MatchString(code) || conditionStatusLiteral.MatchString(code) || !strings.Contains(code, "var s = 1") {
		t.Errorf("comments are checked or code is lost: %q", code)
	}
}
