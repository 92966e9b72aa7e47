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

package version_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/internal/version"
	"github.com/pdtopo/pdtopo/test/testutil"
)

const pkg = "github.com/pdtopo/pdtopo/internal/version.Version"

func TestUnstampedIsDev(t *testing.T) {
	if version.Version != "dev" {
		t.Fatalf("unstamped Version = %q, want dev", version.Version)
	}
	want := "receiver-agent dev (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if s := version.String("receiver-agent"); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, ")") {
		t.Errorf("String = %q, want prefix %q", s, want)
	}
}

func TestRequested(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"-version"}, true},
		{[]string{"--plan-dir", "/x", "--version"}, true},
		{[]string{"--", "--version"}, false},
		{[]string{"--versions"}, false},
		{nil, false},
	} {
		if got := version.Requested(c.args); got != c.want {
			t.Errorf("Requested(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestEveryBinaryPrintsItsStampedVersion builds every command the way the
// Makefile does, with the version stamped by the linker, and runs each with
// --version and nothing else (required flags must not get in the way).
func TestEveryBinaryPrintsItsStampedVersion(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := filepath.Glob(filepath.Join(root, "cmd", "*", "main.go"))
	if err != nil || len(cmds) < 4 {
		t.Fatalf("commands under cmd/: %v %v", cmds, err)
	}
	out := t.TempDir()
	const stamp = "v9.8.7-test.1"
	build := exec.Command("go", "build", "-ldflags", "-X "+pkg+"="+stamp, "-o", out+"/", "./cmd/...")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	for _, main := range cmds {
		name := filepath.Base(filepath.Dir(main))
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(out, name), "--version")
			cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
			b, err := cmd.Output()
			want := regexp.MustCompile(`^` + name + ` ` + regexp.QuoteMeta(stamp) + ` \(go[0-9.]+ [a-z0-9]+/[a-z0-9]+(, commit [0-9a-f]+(-dirty)?)?\)\n$`)
			if err != nil || !want.Match(b) {
				t.Errorf("%s --version: %v, printed %q, want %s", name, err, b, want)
			}
		})
	}
}

// TestMakefileStampsTheVersion checks the build rule passes VERSION to the linker.
func TestMakefileStampsTheVersion(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.LookPath("make")
	testutil.RequireTool(t, err, testutil.SkipMakeEnv, "make -n build shows the linker flags")
	cmd := exec.Command("make", "-n", "build", "VERSION=v1.2.3")
	cmd.Dir = root
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "-X "+pkg+"=v1.2.3") || !strings.Contains(string(b), "./cmd/...") {
		t.Errorf("make build does not stamp VERSION:\n%s", b)
	}
}
