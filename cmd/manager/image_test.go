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

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/webhooks"
)

// dockerStage is what the test reads of one FROM … AS name stage.
type dockerStage struct {
	from, entrypoint, user string
	platformFromBuild      bool
}

func readDockerfile(t *testing.T, root string) map[string]*dockerStage {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stages := map[string]*dockerStage{}
	var cur *dockerStage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "FROM":
			cur = &dockerStage{}
			args := fields[1:]
			if strings.HasPrefix(args[0], "--platform=") {
				cur.platformFromBuild = args[0] == "--platform=$BUILDPLATFORM"
				args = args[1:]
			}
			cur.from = args[0]
			if len(args) == 3 && strings.EqualFold(args[1], "AS") {
				stages[args[2]] = cur
			}
		case "ENTRYPOINT":
			cur.entrypoint = strings.Join(fields[1:], " ")
		case "USER":
			cur.user = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

// The images run what the cluster asks of them: the manager image's
// entrypoint is config/manager's command, the agent image's is the
// injected sidecar's, both as the non-root user the pods' security
// contexts name, and the manager builds on the build platform (it
// cross-compiles; only the agent, with cgo, needs the target's).
func TestDockerfileMatchesTheManifests(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	stages := readDockerfile(t, root)
	raw, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var deploy appsv1.Deployment
	docs := strings.Split(string(raw), "\n---\n")
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &deploy); err != nil {
		t.Fatal(err)
	}
	command := deploy.Spec.Template.Spec.Containers[0].Command
	uid := fmt.Sprintf("%d:%d", webhooks.AgentUID, webhooks.AgentUID)
	for _, c := range []struct {
		stage, entrypoint string
		crossCompiles     bool
	}{
		{"manager", fmt.Sprintf("[%q]", command[0]), false},
		{"receiver-agent", fmt.Sprintf("[%q]", webhooks.AgentBinary), false},
		{"build-manager", "", true},
	} {
		s := stages[c.stage]
		switch {
		case s == nil:
			t.Errorf("the Dockerfile has no stage %q", c.stage)
		case c.entrypoint != "" && s.entrypoint != c.entrypoint:
			t.Errorf("stage %s: ENTRYPOINT %s, want %s", c.stage, s.entrypoint, c.entrypoint)
		case c.entrypoint != "" && s.user != uid:
			t.Errorf("stage %s: USER %q, want %s (the pods' runAsUser)", c.stage, s.user, uid)
		case c.crossCompiles && !s.platformFromBuild:
			t.Errorf("stage %s does not build on $BUILDPLATFORM", c.stage)
		}
	}
}

// The manager image cross-compiles with CGO_ENABLED=0 (the Dockerfile's
// build-manager stage): nothing the manager imports may need cgo, on
// either platform `make docker-buildx` builds.
func TestManagerBuildsWithoutCgoForEveryImagePlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the manager (-short)")
	}
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(t.TempDir(), "manager"), "./cmd/manager")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("linux/%s: %v\n%s", arch, err, out)
		}
	}
}
