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

package localcp

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controlPlane is a running etcd + kube-apiserver with the CRDs installed.
type controlPlane struct {
	env *envtest.Environment
	cfg *rest.Config
	// logs are the files the two processes write to; closed after they stop.
	logs []*os.File
	// Dirs created by envtest (etcd data, apiserver certs); removed by Stop.
	etcdDataDir, apiServerCertDir string
}

// startControlPlane starts etcd and kube-apiserver from o.BinDir on loopback
// ports chosen by envtest, provisions an admin (system:masters) user, and
// installs and waits for the CRDs of o.CRDDir.
func startControlPlane(o Options) (*controlPlane, error) {
	apiLog, err := createLog(o.LogDir, "kube-apiserver.log")
	if err != nil {
		return nil, err
	}
	etcdLog, err := createLog(o.LogDir, "etcd.log")
	if err != nil {
		apiLog.Close()
		return nil, err
	}
	useExisting := false
	env := &envtest.Environment{
		// Never fall back to whatever cluster USE_EXISTING_CLUSTER points at.
		UseExistingCluster:       &useExisting,
		CRDDirectoryPaths:        []string{o.CRDDir},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: o.StartTimeout,
		ControlPlaneStopTimeout:  o.StopTimeout,
	}
	// Explicit paths, so KUBEBUILDER_ASSETS or TEST_ASSET_* cannot swap in
	// other binaries than the ones `make controlplane` built.
	api := env.ControlPlane.GetAPIServer()
	api.Path, api.Out, api.Err = o.apiServerPath(), apiLog, apiLog
	env.ControlPlane.Etcd = &envtest.Etcd{Path: o.etcdPath(), Out: etcdLog, Err: etcdLog}

	cp := &controlPlane{env: env, logs: []*os.File{apiLog, etcdLog}}
	cfg, err := env.Start()
	if err != nil {
		// envtest stops what it started when the processes fail, but not when
		// CRD installation fails; Stop is safe either way.
		_ = env.Stop()
		cp.closeLogs()
		return nil, fmt.Errorf("starting the control plane (logs in %s): %w", o.LogDir, err)
	}
	cp.cfg = cfg
	cp.etcdDataDir = env.ControlPlane.Etcd.DataDir
	cp.apiServerCertDir = api.CertDir
	return cp, nil
}

// kubeconfig is an admin kubeconfig for the API server, with credentials inline.
func (cp *controlPlane) kubeconfig() []byte { return cp.env.KubeConfig }

// apiServerURL is the https URL the API server serves on.
func (cp *controlPlane) apiServerURL() string { return cp.cfg.Host }

// stop stops kube-apiserver, then etcd, and removes their temporary directories.
func (cp *controlPlane) stop() error {
	defer cp.closeLogs()
	if err := cp.env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return nil
}

func (cp *controlPlane) closeLogs() {
	for _, f := range cp.logs {
		_ = f.Close()
	}
	cp.logs = nil
}

// createLog truncates (or creates) dir/name for a process's output.
func createLog(dir, name string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("creating log file: %w", err)
	}
	return f, nil
}

// writeKubeconfig writes data to path atomically, readable only by the user
// (it holds the admin client key).
func writeKubeconfig(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
