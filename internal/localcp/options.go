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

// Package localcp runs pdtopo's embedded local control plane: a real etcd and
// kube-apiserver on loopback and the manager as a child process (both
// started with internal/controlplane, as the tests start them), the PDPair
// CRD, the sample PDPairs, and a kubeconfig that other terminals can
// use. `make run` drives it through hack/run-local; tests drive it through
// Start and Session.Stop.
package localcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// Options says where the pieces of the local control plane live. Zero values
// take the repository's defaults (see Defaults), relative to the working
// directory, which `make run` sets to the repository root.
type Options struct {
	// BinDir holds kube-apiserver and etcd (built by `make controlplane`).
	BinDir string
	// CRDDir holds the CRD manifests to install (config/crd/bases).
	CRDDir string
	// SamplesDir holds the PDPair samples to apply (config/samples); every
	// *.yaml but kustomization.yaml. Empty after defaulting means "apply none"
	// only when NoSamples is set.
	SamplesDir string
	NoSamples  bool
	// KubeconfigPath is where the admin kubeconfig is written (bin/local.kubeconfig).
	// It is removed again on Stop, since it points at a server that is gone.
	KubeconfigPath string
	// LogDir receives kube-apiserver.log, etcd.log and manager.log
	// (bin/local-logs). Logs are kept after Stop for post-mortems.
	LogDir string
	// ManagerPath is the manager binary (bin/manager); empty runs no manager.
	ManagerPath string
	// ManagerExtraArgs follow the default manager flags (see
	// controlplane.DefaultManagerArgs); a repeated flag overrides the default. Overriding
	// --health-probe-bind-address leaves Start unable to wait for readiness.
	// The kubeconfig is always passed as KUBECONFIG.
	ManagerExtraArgs []string
	// WebhookDir holds the generated webhook configurations (config/webhook);
	// with a manager, they are installed pointing at it (see localWebhooks).
	WebhookDir string
	// AgentImage is the manager's --agent-image (nothing pulls it locally).
	AgentImage string
	// DecodePodFiles are labelled decode pods, each created once its PDPair
	// is Ready, to show injection and, with PeerPath and AgentPath, rooms on
	// the pair's wire (config/samples/decode/pod.yaml for a v1 pair,
	// pod-contract.yaml for a cache-contract pair); only with a manager and
	// samples.
	DecodePodFiles []string
	// PeerPath (bin/prefill-peer) and AgentPath (bin/receiver-agent), when
	// both are set and the decode pod was admitted with its agent, run the
	// demo's data path: the pair's prefill side, the pod's agent from its
	// own container spec, and rooms driven through it (see Traffic).
	PeerPath, AgentPath string
	// PodIP is the first decode pod's address as its agent sees it (POD_IP;
	// its probe and status sockets bind there); the next pods take the next
	// addresses (127.0.0.2, …). Default 127.0.0.1.
	PodIP string
	// PrefillsDir is where prefill instances started by hand announce
	// themselves (`prefill-peer --announce`, internal/announce); the
	// Kubelet drives rooms from each to the decode pods it runs
	// (bin/local-prefills).
	PrefillsDir string
	// StartTimeout bounds each control-plane process's start and the
	// manager's readiness (default $KUBEBUILDER_CONTROLPLANE_START_TIMEOUT or
	// 60s; a cold kube-apiserver on 2 busy cores takes 5-20s).
	StartTimeout time.Duration
	// StopTimeout bounds each process's graceful stop before it is killed
	// (default 15s).
	StopTimeout time.Duration
	// Progress receives one line per start/stop step; nil discards them.
	Progress io.Writer
}

// Defaults are the repository-relative locations `make run` uses.
func Defaults() Options {
	return Options{
		BinDir:         "bin",
		CRDDir:         filepath.Join("config", "crd", "bases"),
		SamplesDir:     filepath.Join("config", "samples"),
		KubeconfigPath: filepath.Join("bin", "local.kubeconfig"),
		LogDir:         filepath.Join("bin", "local-logs"),
		ManagerPath:    filepath.Join("bin", "manager"),
		WebhookDir:     filepath.Join("config", "webhook"),
		AgentImage:     "ghcr.io/pdtopo/receiver-agent:dev",
		DecodePodFiles: []string{
			filepath.Join("config", "samples", "decode", "pod.yaml"),
			filepath.Join("config", "samples", "decode", "pod-contract.yaml"),
		},
		PeerPath:    filepath.Join("bin", "prefill-peer"),
		AgentPath:   filepath.Join("bin", "receiver-agent"),
		PrefillsDir: filepath.Join("bin", "local-prefills"),
	}
}

// withDefaults fills empty locations and durations from Defaults, except
// ManagerPath, PeerPath and AgentPath: empty means "do not run it".
func (o Options) withDefaults() Options {
	d := Defaults()
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&o.BinDir, d.BinDir)
	fill(&o.CRDDir, d.CRDDir)
	fill(&o.KubeconfigPath, d.KubeconfigPath)
	fill(&o.LogDir, d.LogDir)
	fill(&o.WebhookDir, d.WebhookDir)
	fill(&o.AgentImage, d.AgentImage)
	fill(&o.PodIP, "127.0.0.1")
	fill(&o.PrefillsDir, d.PrefillsDir)
	if !o.NoSamples && o.DecodePodFiles == nil {
		o.DecodePodFiles = d.DecodePodFiles
	}
	if !o.NoSamples {
		fill(&o.SamplesDir, d.SamplesDir)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
		// The variable envtest reads, so CI can allow a loaded machine more time.
		if d, err := time.ParseDuration(os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT")); err == nil && d > 0 {
			o.StartTimeout = d
		}
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 15 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// check reports every missing input at once, each with the command that makes it.
func (o Options) check() error {
	var errs []error
	need := func(path, makeWith string) {
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("%s is missing (build it with `%s`)", path, makeWith))
		}
	}
	need(controlplane.APIServerPath(o.BinDir), "make controlplane")
	need(controlplane.EtcdPath(o.BinDir), "make controlplane")
	if o.ManagerPath != "" {
		need(o.ManagerPath, "go build -o bin/ ./cmd/manager")
		need(filepath.Join(o.WebhookDir, "manifests.yaml"), "make manifests")
		if !o.NoSamples {
			for _, f := range o.DecodePodFiles {
				need(f, "git checkout config/samples")
			}
		}
		if o.PeerPath != "" && o.AgentPath != "" {
			need(o.PeerPath, "go build -o bin/ ./cmd/prefill-peer")
			need(o.AgentPath, "go build -o bin/ ./cmd/receiver-agent")
		}
	}
	if crds, _ := filepath.Glob(filepath.Join(o.CRDDir, "*.yaml")); len(crds) == 0 {
		errs = append(errs, fmt.Errorf("%s holds no CRD manifests (generate them with `make manifests`)", o.CRDDir))
	}
	if !o.NoSamples {
		if _, err := os.Stat(o.SamplesDir); err != nil {
			errs = append(errs, fmt.Errorf("samples directory %s: %w", o.SamplesDir, err))
		}
	}
	return errors.Join(errs...)
}
