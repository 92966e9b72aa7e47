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

package sglang

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// The commits are whole: a short prefix may become ambiguous as SGLang's
// history grows, and `git show COMMIT:path` would then fail.
func TestCommitsAreFull(t *testing.T) {
	for name, c := range map[string]string{"Commit": Commit, "MooncakeConnCommit": MooncakeConnCommit} {
		if !fullCommit.MatchString(c) {
			t.Errorf("%s = %q, want 40 lowercase hex digits", name, c)
		}
	}
}

// The golden verdicts name the file of the commits they were made at.
func TestVerdictsNameTheReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(Verdicts)))
	if err != nil {
		t.Fatalf("reference.env: SGLANG_VERDICTS=%s: %v", Verdicts, err)
	}
	var head struct {
		Reference string            `json:"reference"`
		Cases     []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatal(err)
	}
	if head.Reference != "conformance/sglang/reference.env" || len(head.Cases) == 0 {
		t.Errorf("%s: reference %q, %d cases", Verdicts, head.Reference, len(head.Cases))
	}
}
