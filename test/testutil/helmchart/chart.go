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

// Package helmchart renders charts/pdtopo with the real Helm CLI (bin/helm,
// which `make helm` builds from the hack/helm module) and config/'s
// kustomizations with kubectl, for the tests that hold the two install
// paths to each other and to the API server.
package helmchart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// SkipEnv lets a machine without bin/helm skip the chart's tests
// deliberately; otherwise a missing helm fails them.
const SkipEnv = "PDTOPO_SKIP_HELM"

// ChartDir is the chart's directory under the repository root.
const ChartDir = "charts/pdtopo"

// Helm returns the path of bin/helm (or of helm beside the control-plane
// binaries in $KUBEBUILDER_ASSETS, for a copy of the tree without bin/),
// failing the test with instructions when there is none (or skipping it
// when PDTOPO_SKIP_HELM=1).
func Helm(tb testing.TB) string {
	tb.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(root, "bin", "helm")
	if _, err = os.Stat(path); err != nil {
		if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
			if _, err2 := os.Stat(filepath.Join(dir, "helm")); err2 == nil {
				return filepath.Join(dir, "helm")
			}
		}
	}
	testutil.RequireTool(tb, err, SkipEnv, "the Helm chart's tests need bin/helm (make helm)")
	return path
}

// Template runs `helm template RELEASE charts/pdtopo -n NAMESPACE` with the
// values (written to a file, as a user's -f would be) and returns what Helm
// printed, or its error output.
func Template(tb testing.TB, release, namespace string, values map[string]any) ([]byte, error) {
	tb.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	args := []string{"template", release, filepath.Join(root, ChartDir), "--namespace", namespace}
	if values != nil {
		raw, err := yaml.Marshal(values)
		if err != nil {
			tb.Fatal(err)
		}
		// Not tb.TempDir(): Helm splits --values at commas, and subtest
		// names put commas into it.
		dir, err := os.MkdirTemp("", "pdtopo-helm-values-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = os.RemoveAll(dir) })
		file := filepath.Join(dir, "values.yaml")
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "--values", file)
	}
	cmd := exec.Command(Helm(tb), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stderr.Bytes(), fmt.Errorf("helm %v: %w\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// Render is Template for values that must render: it fails the test
// otherwise, and decodes the objects.
func Render(tb testing.TB, release, namespace string, values map[string]any) []unstructured.Unstructured {
	tb.Helper()
	raw, err := Template(tb, release, namespace, values)
	if err != nil {
		tb.Fatal(err)
	}
	objs, err := Decode(raw)
	if err != nil {
		tb.Fatalf("helm template output: %v", err)
	}
	return objs
}

// Kustomize runs `kubectl kustomize DIR` and decodes the objects.
func Kustomize(tb testing.TB, kubectl, dir string) []unstructured.Unstructured {
	tb.Helper()
	out, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tb.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, ee.Stderr)
		}
		tb.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	objs, err := Decode(out)
	if err != nil {
		tb.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	return objs
}

// Decode splits a multi-document YAML stream into objects, leaving out
// empty documents.
func Decode(raw []byte) ([]unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []unstructured.Unstructured
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// Key names an object: kind, namespace and name.
func Key(u unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + " " + ns + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}

// Manager is the manager container of a rendered Deployment.
func Manager(tb testing.TB, u unstructured.Unstructured) corev1.Container {
	tb.Helper()
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
		tb.Fatalf("%s: %v", Key(u), err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	tb.Fatalf("%s has no manager container", Key(u))
	return corev1.Container{}
}

var dryRunApplied = regexp.MustCompile(`(?m) serverside-applied \(server dry run\)$`)

// ServerDryRun applies file to the API server with
// `kubectl apply --server-side --dry-run=server` and returns how many
// objects the server accepted, with kubectl's output.
func ServerDryRun(kubectl, kubeconfig, file string) (int, string, error) {
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--dry-run=server", "-f", file).CombinedOutput()
	return len(dryRunApplied.FindAllString(string(out), -1)), string(out), err
}
