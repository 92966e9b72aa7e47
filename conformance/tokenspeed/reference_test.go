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

package tokenspeed

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// The commits are whole: a short prefix may become ambiguous as the
// engine's history grows, and `git show COMMIT:path` would then fail.
func TestCommitsAreFull(t *testing.T) {
	for name, c := range map[string]string{"V1Commit": V1Commit, "CacheContractCommit": CacheContractCommit} {
		if !fullCommit.MatchString(c) {
			t.Errorf("%s = %q, want 40 lowercase hex digits", name, c)
		}
	}
	if V1Commit == CacheContractCommit {
		t.Error("the v1 and cache-contract wires name the same commit")
	}
}

// The golden data directories reference.env names exist, so a package
// moved without its line here fails this test rather than a regeneration
// months later.
func TestGoldenDataDirectoriesExist(t *testing.T) {
	for _, key := range []string{"CONTRACT_WIRE_VECTORS", "CONTRACT_PLAN_VECTORS"} {
		dir, err := Reference(key)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(dir))); err != nil || !info.IsDir() {
			t.Errorf("reference.env: %s=%s is not a directory of the repository", key, dir)
		}
	}
}
