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
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

const (
	testIMG      = "registry.example:5000/team/manager:v1.2.3"
	testAgentIMG = "registry.example:5000/team/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// TestBuildInstallerAppliesToTheRealAPIServer runs `make build-installer`
// for two pinned images, checks the images landed where they belong, and
// applies dist/install.yaml to a real kube-apiserver with a server-side dry
// run: every object must be one the API server would accept.
func TestBuildInstallerAppliesToTheRealAPIServer(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := testutil.Kubectl(t)
	tmp := t.TempDir()
	installYAML := filepath.Join(tmp, "install.yaml")

	// -o manifests: the generated files are checked by their own tests; the
	// test must not rewrite the tree.
	mk := exec.Command("make", "-o", "manifests", "build-installer", "IMG="+testIMG, "AGENT_IMG="+testAgentIMG,
		"INSTALLER_DIR="+filepath.Join(tmp, "overlay"), "INSTALL_YAML="+installYAML, "KUBECTL="+kubectl)
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build-installer: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(installYAML)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := helmchart.Decode(raw)
	if err != nil {
		t.Fatalf("install.yaml: %v", err)
	}
	checkContents(t, raw, objects)

	env := testutil.StartBareForTest(t)
	cfg := env.Config
	kubeconfig := testutil.AdminKubeconfig(t, env)
	// A dry run creates nothing, so the namespace the install creates would
	// not exist for the objects in it: create that one for real first.
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pdtopo-system"}}); err != nil {
		t.Fatal(err)
	}

	accepted, out, err := helmchart.ServerDryRun(kubectl, kubeconfig, installYAML)
	if err != nil {
		t.Fatalf("server-side dry run of install.yaml: %v\n%s", err, out)
	}
	if accepted != len(objects) {
		t.Errorf("%d objects accepted, install.yaml holds %d:\n%s", accepted, len(objects), out)
	}

	// The dry run validates for real: a Deployment with a negative replica
	// count is refused.
	broken := filepath.Join(tmp, "broken.yaml")
	replicas := regexp.MustCompile(`(?m)^(\s+replicas:) \d+$`)
	if !replicas.Match(raw) {
		t.Fatal("install.yaml has no Deployment replica count to break")
	}
	if err := os.WriteFile(broken, replicas.ReplaceAll(raw, []byte("${1} -1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, err := helmchart.ServerDryRun(kubectl, kubeconfig, broken); err == nil || !strings.Contains(out, "spec.replicas") {
		t.Errorf("a negative replica count passed the dry run: %v\n%s", err, out)
	}
}

// checkContents: what the issue lists is there, the images are the ones
// asked for, and none of config/'s placeholder images is left.
func checkContents(t *testing.T, raw []byte, objects []unstructured.Unstructured) {
	t.Helper()
	kinds := map[string]int{}
	var manager *appsv1.Deployment
	for _, o := range objects {
		kinds[o.GetKind()]++
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			b, _ := o.MarshalJSON()
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			manager = &d
		}
	}
	for _, k := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding", "Deployment", "Service", "Secret", "MutatingWebhookConfiguration"} {
		if kinds[k] == 0 {
			t.Errorf("install.yaml has no %s (kinds: %v)", k, kinds)
		}
	}
	if manager == nil || len(manager.Spec.Template.Spec.Containers) == 0 {
		t.Fatal("no manager Deployment")
	}
	ctr := manager.Spec.Template.Spec.Containers[0]
	if ctr.Image != testIMG {
		t.Errorf("manager image %q, want %q", ctr.Image, testIMG)
	}
	agent := ""
	for _, e := range ctr.Env {
		if e.Name == "PDTOPO_AGENT_IMAGE" {
			agent = e.Value
		}
	}
	if agent != testAgentIMG || !contains(ctr.Args, "--agent-image=$(PDTOPO_AGENT_IMAGE)") {
		t.Errorf("agent image %q (args %v), want %q passed by --agent-image", agent, ctr.Args, testAgentIMG)
	}
	if bytes.Contains(raw, []byte("ghcr.io/pdtopo/")) {
		t.Errorf("install.yaml still names a placeholder image ghcr.io/pdtopo/…")
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
