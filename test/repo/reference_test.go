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
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdtopo/pdtopo/conformance/tokenspeed"
)

// referenceFile is the one file that spells the reference engine's commits.
const referenceFile = "conformance/tokenspeed/reference.env"

// The reference commits are written once: no tracked file but
// conformance/tokenspeed/reference.env spells either (its first 8 hex
// digits, the short form docs once used). Scripts source that file, Go
// takes tokenspeed.V1Commit and tokenspeed.CacheContractCommit, and docs
// name the file or the constant, so moving to a newer engine commit is one
// edit.
func TestReferenceCommitsAreWrittenOnce(t *testing.T) {
	root := repoRoot(t)
	commits := map[string]string{"V1Commit": tokenspeed.V1Commit, "CacheContractCommit": tokenspeed.CacheContractCommit}
	for name, commit := range commits {
		if len(commit) != 40 {
			t.Fatalf("tokenspeed.%s = %q: reference.env must give the full 40-digit commit", name, commit)
		}
	}
	for _, f := range trackedFiles(t, root) {
		if f.path == referenceFile {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.path)))
		if os.IsNotExist(err) { // deleted in the work tree, not yet in the index
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for name, commit := range commits {
			if bytes.Contains(raw, []byte(commit[:8])) {
				t.Errorf("%s spells the reference commit %s: name %s (tokenspeed.%s) instead", f.path, commit[:8], referenceFile, name)
			}
		}
	}
}
