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

// Package testutil is what the tests share: the real control plane for
// integration tests (internal/controlplane's starter, the one `make run`
// uses, with the repository's CRDs and webhooks), the manager binary
// launched against it, the one polling helper (Eventually), a free loopback
// port, namespaces, can-i questions, metrics scrapes and the rule that a
// missing tool fails a test unless a variable says to skip it.
package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// SkipEnv is the variable that lets a run without the binaries skip the
// integration tests instead of failing.
const SkipEnv = "PDTOPO_SKIP_ENVTEST"

// ErrSkip is returned by Start when the binaries are absent and SkipEnv=1.
var ErrSkip = errors.New("envtest skipped")

// Env is a running control plane.
type Env struct {
	*envtest.Environment
	Config *rest.Config
	Scheme *runtime.Scheme
	// Root is the repository root.
	Root string
}

// Start starts etcd and kube-apiserver and installs the CRDs of config/crd/bases.
// Without the binaries it fails with instructions, or returns ErrSkip when
// PDTOPO_SKIP_ENVTEST=1.
func Start() (*Env, error) { return start(nil) }

// StartWithWebhooks is Start with the admission webhooks of config/webhook
// installed: envtest makes a local CA and serving certificate and rewrites
// each webhook's client config to a URL on loopback, so the API server calls
// a webhook server the test runs with Env.WebhookServerOptions.
func StartWithWebhooks() (*Env, error) {
	return start(func(root string, o *controlplane.Options) {
		o.WebhookDir = filepath.Join(root, "config", "webhook")
	})
}

func start(configure func(root string, o *controlplane.Options)) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := assetsDir(root)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pdv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	o := controlplane.Options{
		BinDir: assets,
		CRDDir: filepath.Join(root, "config", "crd", "bases"),
		Scheme: scheme,
	}
	if configure != nil {
		configure(root, &o)
	}
	cp, err := controlplane.Start(o)
	if err != nil {
		return nil, err
	}
	return &Env{Environment: cp.Env, Config: cp.Config, Scheme: scheme, Root: root}, nil
}

// assetsDir is $KUBEBUILDER_ASSETS (the Makefile sets it to bin/) or bin/.
func assetsDir(root string) (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(root, "bin")
	}
	var missing []string
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return dir, nil
	}
	if os.Getenv(SkipEnv) == "1" {
		return "", fmt.Errorf("%w: %v not in %s and %s=1", ErrSkip, missing, dir, SkipEnv)
	}
	return "", fmt.Errorf("the integration tests need the real control plane, but %v is not in %s.\n"+
		"Build it once with `make controlplane` (about 12 minutes on 2 cores; cached under bin/), "+
		"or point KUBEBUILDER_ASSETS at a directory holding kube-apiserver and etcd.\n"+
		"To skip these tests deliberately, set %s=1", missing, dir, SkipEnv)
}

// RepoRoot is the directory of the module's go.mod, found from the working
// directory (go test runs in the package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// WebhookServerOptions are the options of a webhook server that the API
// server reaches through the configurations StartWithWebhooks installed.
func (e *Env) WebhookServerOptions() webhook.Options {
	w := &e.WebhookInstallOptions
	return webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir}
}
