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

package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildCommands builds the main packages pkgs (e.g. "./cmd/pdtopo") of
// the module at root into a directory removed when the test ends, and
// returns it: each binary is there under its package's name.
func BuildCommands(t testing.TB, root string, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", pkgs, err, out)
	}
	return dir
}

// PlanFile writes the plans of the PDPair file pair into dir/plans.json
// as `pdtopo plan -f PAIR -o json` prints them (bin holds pdtopo), and
// returns its path: an agent's --plan-file.
func PlanFile(t testing.TB, bin, pair, dir string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, "pdtopo"), "plan", "-f", pair, "-o", "json").Output()
	if err != nil {
		t.Fatalf("pdtopo plan -f %s: %v", pair, err)
	}
	path := filepath.Join(dir, "plans.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
