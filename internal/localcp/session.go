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
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// Session is a running local control plane. Stop it exactly once.
type Session struct {
	opts    Options
	cp      *controlplane.ControlPlane
	manager *controlplane.Process
	client  client.WithWatch
	hooks   *localWebhooks

	// Applied are the sample objects the API server accepted.
	Applied []AppliedObject
	// SampleErr lists the samples the API server refused (nil when all applied).
	SampleErr error
	// Demos are the sample decode pods, one per Options.DecodePodFiles, in
	// that order (none without a manager or samples).
	Demos []*Demo
	// Kubelet runs the agents of the other admitted decode pods (nil until
	// StartKubelet).
	Kubelet *Kubelet
	// StartupTime is how long Start took, from nothing to samples applied.
	StartupTime time.Duration
}

// Start brings up etcd and kube-apiserver, installs the CRDs, writes the
// kubeconfig, starts the manager (when Options.ManagerPath is set) and waits
// for it to be ready, then applies the samples. Samples the API server
// refuses are reported in Session.SampleErr, not as a failure to start. On
// any other error everything already started is stopped again.
func Start(ctx context.Context, o Options) (s *Session, err error) {
	o = o.withDefaults()
	if err := o.check(); err != nil {
		return nil, err
	}
	began := time.Now()
	s = &Session{opts: o}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
			s = nil
		}
	}()

	step(o, "starting etcd and kube-apiserver from %s, installing CRDs from %s", o.BinDir, o.CRDDir)
	if s.cp, err = controlplane.Start(controlplane.Options{
		BinDir: o.BinDir, CRDDir: o.CRDDir, LogDir: o.LogDir,
		StartTimeout: o.StartTimeout, StopTimeout: o.StopTimeout,
	}); err != nil {
		return s, err
	}
	step(o, "kube-apiserver serving on %s (%.1fs)", s.cp.URL(), time.Since(began).Seconds())
	if err = writeKubeconfig(o.KubeconfigPath, s.cp.Kubeconfig()); err != nil {
		return s, err
	}
	if s.client, err = newClient(s.cp.Config); err != nil {
		return s, err
	}
	if o.ManagerPath != "" {
		if s.hooks, err = newLocalWebhooks(); err != nil {
			return s, err
		}
		// The webhook flags come first, so that flags given to run-local override them.
		step(o, "starting %s (log: %s)", o.ManagerPath, o.LogDir+"/manager.log")
		if s.manager, err = controlplane.StartManager(controlplane.ManagerOptions{
			Path: o.ManagerPath, Kubeconfig: o.KubeconfigPath, LogDir: o.LogDir,
			ExtraArgs: append(s.hooks.managerArgs(o.AgentImage), o.ManagerExtraArgs...),
		}); err != nil {
			return s, err
		}
		if err = s.manager.WaitReady(ctx, "", o.StartTimeout); err != nil {
			return s, err
		}
		step(o, "manager ready (%.1fs), serving admission webhooks on https://127.0.0.1:%d with a local CA", time.Since(began).Seconds(), s.hooks.port)
		installed, err := s.hooks.install(ctx, s.client, o.WebhookDir)
		if err != nil {
			return s, err
		}
		for _, obj := range installed {
			step(o, "installed %s %s (URL client config, local CA)", obj.Kind, obj.Name)
		}
	}
	if !o.NoSamples {
		s.Applied, s.SampleErr = ApplySamples(ctx, s.client, o.SamplesDir)
		step(o, "applied %d objects from %s", len(s.Applied), o.SamplesDir)
		if s.SampleErr != nil {
			step(o, "some samples were refused:\n%v", s.SampleErr)
		}
		if s.manager != nil {
			for i, file := range o.DecodePodFiles {
				s.Demos = append(s.Demos, startDemo(ctx, s.client, o, file, i))
			}
		}
	}
	s.StartupTime = time.Since(began)
	return s, nil
}

// StartKubelet plays the kubelet for every decode pod the webhook admits
// with the agent sidecar, except the sample pods whose agents the session
// runs itself; their addresses follow the sample pods'. It needs a manager
// (the webhook) and the agent binary.
func (s *Session) StartKubelet() (err error) {
	if s.manager == nil || s.opts.AgentPath == "" {
		return errors.New("running decode pods' agents needs the manager (its webhook) and the agent binary")
	}
	skip := map[types.UID]bool{}
	for _, d := range s.Demos {
		if d.Traffic != nil {
			skip[d.Decode.Pod.UID] = true
		}
	}
	s.Kubelet, err = startKubelet(s.client, s.opts, s.opts.PrefillsDir, skip, len(s.opts.DecodePodFiles))
	return err
}

// Client talks to the local API server as the admin user; it knows the
// PDPair types and the built-in ones.
func (s *Session) Client() client.WithWatch { return s.client }

// RESTConfig is the admin user's client configuration.
func (s *Session) RESTConfig() *rest.Config { return rest.CopyConfig(s.cp.Config) }

// KubeconfigPath is the kubeconfig written for other terminals.
func (s *Session) KubeconfigPath() string { return s.opts.KubeconfigPath }

// ManagerExited is closed if the manager exits; nil when no manager runs.
func (s *Session) ManagerExited() <-chan struct{} {
	if s.manager == nil {
		return nil
	}
	return s.manager.Exited()
}

// ManagerExitError describes why the manager exited, with its log's last lines.
func (s *Session) ManagerExitError() error { return s.manager.ExitError() }

// Stop stops the demo's traffic (agent, peer), the manager, kube-apiserver and etcd, in that order, removes
// their temporary directories and the kubeconfig, and reports every failure.
// Logs stay in Options.LogDir.
func (s *Session) Stop() error {
	var errs []error
	if s.Kubelet != nil {
		step(s.opts, "stopping the agents and rooms of the decode pods run as the kubelet would")
		s.Kubelet.Stop()
	}
	for _, d := range s.Demos {
		if d.Traffic != nil {
			step(s.opts, "stopping the room drivers, the decode agent and the prefill peer of %s", d.Traffic.Pair)
			errs = append(errs, d.Traffic.stop(s.opts.StopTimeout))
		}
	}
	if s.manager != nil {
		step(s.opts, "stopping the manager")
		errs = append(errs, s.manager.Stop(s.opts.StopTimeout))
	}
	if s.cp != nil {
		step(s.opts, "stopping kube-apiserver and etcd")
		errs = append(errs, s.cp.Stop())
	}
	if s.hooks != nil {
		errs = append(errs, s.hooks.remove())
	}
	if err := os.Remove(s.opts.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func newClient(cfg *rest.Config) (client.WithWatch, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pdv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client for the local API server: %w", err)
	}
	return c, nil
}

func step(o Options, format string, args ...any) {
	fmt.Fprintf(o.Progress, "[run] "+format+"\n", args...)
}
