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

package vllm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// The commits are whole: a short prefix may become ambiguous as vLLM's
// history grows, and `git show COMMIT:path` would then fail.
func TestCommitsAreFull(t *testing.T) {
	for name, c := range map[string]string{"NixlCommit": NixlCommit, "KVCacheLayoutCommit": KVCacheLayoutCommit} {
		if !fullCommit.MatchString(c) {
			t.Errorf("%s = %q, want 40 lowercase hex digits", name, c)
		}
	}
}

// The golden verdicts were made from the commits reference.env names: a
// commit moved without regenerating them fails here, not in a review.
func TestVerdictsAreFromTheReferenceCommits(t *testing.T) {
	path, err := Reference("VLLM_NIXL_VERDICTS")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatalf("reference.env: VLLM_NIXL_VERDICTS=%s: %v", path, err)
	}
	var head struct {
		NixlCommit          string `json:"vllmNixlCommit"`
		KVCacheLayoutCommit string `json:"vllmKVCacheLayoutCommit"`
		Cases               []json.RawMessage
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatal(err)
	}
	if head.NixlCommit != NixlCommit || head.KVCacheLayoutCommit != KVCacheLayoutCommit {
		t.Errorf("%s was made from %s / %s, reference.env names %s / %s: run nixl/generate.sh",
			path, head.NixlCommit, head.KVCacheLayoutCommit, NixlCommit, KVCacheLayoutCommit)
	}
	if len(head.Cases) == 0 {
		t.Errorf("%s holds no cases", path)
	}
}

// The version cases were made from the NIXL commit reference.env names.
func TestVersionVerdictsAreFromTheReferenceCommit(t *testing.T) {
	path, err := Reference("VLLM_NIXL_VERSION_VERDICTS")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatalf("reference.env: VLLM_NIXL_VERSION_VERDICTS=%s: %v", path, err)
	}
	var head struct {
		NixlCommit string `json:"vllmNixlCommit"`
		Cases      []json.RawMessage
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatal(err)
	}
	if head.NixlCommit != NixlCommit || len(head.Cases) == 0 {
		t.Errorf("%s: %d cases made from %s, reference.env names %s: run nixl/generate.sh", path, len(head.Cases), head.NixlCommit, NixlCommit)
	}
}
