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

package app_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/test/clitest"
)

func TestVersionFlag(t *testing.T) {
	code, out, _ := clitest.Run(t, "", "--version")
	if code != cli.ExitOK || !regexp.MustCompile(`^pdtopo dev \(go[0-9.]+ [a-z0-9]+/[a-z0-9]+[^)]*\)\n$`).MatchString(out) {
		t.Errorf("--version: exit %d %q", code, out)
	}
}

// Installed as kubectl-pdtopo, the command is `kubectl pdtopo` in its help
// and messages.
func TestKubectlPluginName(t *testing.T) {
	saved := os.Args[0]
	t.Cleanup(func() { os.Args[0] = saved })
	os.Args[0] = "/usr/local/bin/kubectl-pdtopo"
	code, _, errOut := clitest.Run(t, "", "plan")
	if code != cli.ExitUsage || !strings.HasPrefix(errOut, "kubectl pdtopo plan: ") {
		t.Errorf("as kubectl-pdtopo: exit %d %q", code, errOut)
	}
	os.Args[0] = "pdtopo"
	if _, _, errOut := clitest.Run(t, "", "plan"); !strings.HasPrefix(errOut, "pdtopo plan: ") {
		t.Errorf("as pdtopo: %q", errOut)
	}
}
