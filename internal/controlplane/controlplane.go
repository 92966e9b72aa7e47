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

// Package controlplane starts the real control plane and the processes run
// against it, for `make run` (internal/localcp, driven by hack/run-local)
// and for the tests (test/testutil): etcd and kube-apiserver on loopback,
// started with controller-runtime's envtest machinery from the binaries
// `make controlplane` caches in bin/, with the CRDs installed; and child
// processes (the manager, the demo's prefill peer and agent) in process
// groups of their own, with their logs in files.
package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say which binaries to run and what to install.
type Options struct {
	// BinDir holds kube-apiserver and etcd; they are run from there by
	// explicit path, so KUBEBUILDER_ASSETS or TEST_ASSET_* cannot swap in
	// other binaries.
	BinDir string
	// CRDDir holds the CRD manifests to install and wait for; empty installs
	// none (a bare API server, for tests of what installs them).
	CRDDir string
	// WebhookDir, when set, holds admission webhook configurations that
	// envtest installs pointing at a webhook server on loopback with a
	// certificate it makes (see ControlPlane.Env.WebhookInstallOptions).
	WebhookDir string
	// LogDir, when set, receives kube-apiserver.log and etcd.log; otherwise
	// their output is discarded.
	LogDir string
	// Scheme is the client scheme of Env; nil is client-go's.
	Scheme *runtime.Scheme
	// StartTimeout and StopTimeout bound each process's start and graceful
	// stop; zero takes envtest's defaults (which read
	// KUBEBUILDER_CONTROLPLANE_START_TIMEOUT).
	StartTimeout, StopTimeout time.Duration
}

// ControlPlane is a running etcd + kube-apiserver with the CRDs installed.
type ControlPlane struct {
	// Env is envtest's environment: its KubeConfig is an admin
	// (system:masters) kubeconfig with credentials inline.
	Env *envtest.Environment
	// Config is the admin client configuration.
	Config *rest.Config
	// EtcdDataDir and APIServerCertDir are the temporary directories envtest
	// made; Stop removes them.
	EtcdDataDir, APIServerCertDir string
	// logs are the files the two processes write to; closed after they stop.
	logs []*os.File
}

// APIServerPath and EtcdPath are where Start looks for the binaries.
func APIServerPath(binDir string) string { return filepath.Join(binDir, "kube-apiserver") }

// EtcdPath is etcd's path under binDir.
func EtcdPath(binDir string) string { return filepath.Join(binDir, "etcd") }

// Start starts etcd and kube-apiserver from o.BinDir on loopback ports
// chosen by envtest, provisions an admin user, and installs and waits for
// the CRDs of o.CRDDir.
func Start(o Options) (*ControlPlane, error) {
	cp := &ControlPlane{}
	useExisting := false
	env := &envtest.Environment{
		// Never fall back to whatever cluster USE_EXISTING_CLUSTER points at.
		UseExistingCluster: &useExisting,
		Scheme:             o.Scheme,
		// For kubectl (AuthenticatedUser.Kubectl); kube-apiserver and etcd
		// get explicit paths below.
		BinaryAssetsDirectory:    o.BinDir,
		ControlPlaneStartTimeout: o.StartTimeout,
		ControlPlaneStopTimeout:  o.StopTimeout,
	}
	if o.CRDDir != "" {
		env.CRDDirectoryPaths, env.ErrorIfCRDPathMissing = []string{o.CRDDir}, true
	}
	if o.WebhookDir != "" {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{o.WebhookDir}}
	}
	api := env.ControlPlane.GetAPIServer()
	api.Path = APIServerPath(o.BinDir)
	env.ControlPlane.Etcd = &envtest.Etcd{Path: EtcdPath(o.BinDir)}
	if o.LogDir != "" {
		apiLog, err := CreateLog(o.LogDir, "kube-apiserver.log")
		if err != nil {
			return nil, err
		}
		etcdLog, err := CreateLog(o.LogDir, "etcd.log")
		if err != nil {
			apiLog.Close()
			return nil, err
		}
		cp.logs = []*os.File{apiLog, etcdLog}
		api.Out, api.Err = apiLog, apiLog
		env.ControlPlane.Etcd.Out, env.ControlPlane.Etcd.Err = etcdLog, etcdLog
	}
	cp.Env = env
	cfg, err := env.Start()
	if err != nil {
		// envtest stops what it started when the processes fail, but not when
		// CRD installation fails; Stop is safe either way.
		_ = env.Stop()
		cp.closeLogs()
		where := o.BinDir
		if o.LogDir != "" {
			where += "; logs in " + o.LogDir
		}
		return nil, fmt.Errorf("starting kube-apiserver and etcd (%s): %w", where, err)
	}
	cp.Config = cfg
	cp.EtcdDataDir = env.ControlPlane.Etcd.DataDir
	cp.APIServerCertDir = api.CertDir
	return cp, nil
}

// Kubeconfig is an admin kubeconfig for the API server, with credentials inline.
func (cp *ControlPlane) Kubeconfig() []byte { return cp.Env.KubeConfig }

// URL is the https URL the API server serves on.
func (cp *ControlPlane) URL() string { return cp.Config.Host }

// Stop stops kube-apiserver, then etcd, and removes their temporary directories.
func (cp *ControlPlane) Stop() error {
	defer cp.closeLogs()
	if err := cp.Env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return nil
}

func (cp *ControlPlane) closeLogs() {
	for _, f := range cp.logs {
		_ = f.Close()
	}
	cp.logs = nil
}

// CreateLog truncates (or creates) dir/name for a process's output.
func CreateLog(dir, name string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("creating log file: %w", err)
	}
	return f, nil
}
