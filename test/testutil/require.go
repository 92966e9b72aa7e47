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
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// BinDir is the directory holding kube-apiserver and etcd for tests that
// run them as processes of their own (the local control plane, make run):
// $KUBEBUILDER_ASSETS, or bin/ of the repository. Without them the test
// fails with instructions (CI builds them, so nothing is skipped there),
// unless PDTOPO_SKIP_ENVTEST=1 says to skip deliberately.
func BinDir(tb testing.TB) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := assetsDir(root)
	if errors.Is(err, ErrSkip) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Kubectl is the kubectl beside kube-apiserver and etcd (BinDir), failing
// the test when it is missing (skipping it when PDTOPO_SKIP_ENVTEST=1).
func Kubectl(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(BinDir(tb), "kubectl")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv(SkipEnv) == "1" {
			tb.Skipf("%v and %s=1", err, SkipEnv)
		}
		tb.Fatalf("kubectl: %v (make kubectl, or point KUBEBUILDER_ASSETS at a directory holding it)", err)
	}
	return path
}

// SkipMakeEnv lets a machine without make skip the tests that run it.
const SkipMakeEnv = "PDTOPO_SKIP_MAKE"

// RequireTool fails the test when a tool it runs is missing, saying what
// it is for, unless the opt-out variable optOut is "1": then it skips. A
// missing tool never turns a check off quietly.
func RequireTool(tb testing.TB, err error, optOut, what string) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv(optOut) == "1" {
		tb.Skipf("%s: %v (%s=1)", what, err, optOut)
	}
	tb.Fatalf("%s: %v\nInstall it, or set %s=1 to skip this check deliberately.", what, err, optOut)
}
