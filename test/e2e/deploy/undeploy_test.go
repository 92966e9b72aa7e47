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

package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// `make undeploy` on a control plane without a namespace controller (the
// local one, envtest) returns, and leaves nothing of config/default but the
// namespace and the CRD on their way out.
func TestUndeployFinishesWithoutANamespaceController(t *testing.T) {
	bin := testutil.BinDir(t)
	kubectl := filepath.Join(bin, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl is not in %s: %v", bin, err)
	}
	env, err := testutil.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	_, kubeconfig := testutil.AdminUser(t, env, "deployer")
	run := func(timeout time.Duration, stdin []byte, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = env.Root
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdin = bytes.NewReader(stdin)
		// make's children (kubectl) outlive a killed make and hold its output
		// open; stop waiting for them shortly after the deadline.
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s %v did not finish within %s:\n%s", name, args, timeout, out)
		}
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	manifests := []byte(run(time.Minute, nil, kubectl, "kustomize", "config/default"))
	// What `make deploy` applies (it also regenerates the manifests first).
	run(time.Minute, manifests, kubectl, "apply", "--server-side", "-f", "-")
	run(2*time.Minute, nil, "make", "--no-print-directory", "undeploy", "KUBECTL="+kubectl)

	left := run(time.Minute, manifests, kubectl, "get", "--ignore-not-found", "-f", "-",
		"-o", `jsonpath={range .items[*]}{.kind}/{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(left), "\n") {
		if line == "" {
			continue
		}
		kind, deleting, _ := strings.Cut(line, " ")
		if deleting == "" {
			t.Errorf("%s is still there and not being deleted", kind)
		}
		if !strings.HasPrefix(kind, "Namespace/") && !strings.HasPrefix(kind, "CustomResourceDefinition/") {
			t.Errorf("%s is left behind (only the namespace and the CRD finish asynchronously)", kind)
		}
	}
}
