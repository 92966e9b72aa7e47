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
	"io"
	"path/filepath"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// Run starts a session, shows the live PDPair table on out until ctx ends (or
// the manager exits), then stops everything. It is `make run`.
func Run(ctx context.Context, o Options, out io.Writer) (err error) {
	if o.Progress == nil {
		o.Progress = out
	}
	s, err := Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out)
		err = errors.Join(err, s.Stop())
		if err == nil {
			step(s.opts, "stopped: every process started here has exited and the temporary directories are removed")
		}
	}()

	if s.manager != nil && s.opts.AgentPath != "" {
		if err := s.StartKubelet(); err != nil {
			step(s.opts, "decode pods created with kubectl will not run: %v", err)
		}
	}
	header := s.banner()
	table := NewLiveTable(s.Client(), out, header)
	table.Extra = s.extraLines
	if !table.InPlace {
		fmt.Fprint(out, header)
	}
	tableCtx, stopTable := context.WithCancel(ctx)
	defer stopTable()
	go func() {
		select {
		case <-s.ManagerExited():
		case <-tableCtx.Done():
		}
		stopTable()
	}()
	table.Run(tableCtx)
	if ctx.Err() == nil { // the table stopped because the manager exited
		return s.ManagerExitError()
	}
	return nil
}

// extraLines are drawn under the table: the sample pods' handshakes,
// then the pods run as the kubelet would and their rooms.
func (s *Session) extraLines() string {
	var b strings.Builder
	if s.traffic() {
		b.WriteString("KV handshakes (prefill peer ↔ decode agent, rooms of every engine rank):\n")
		for _, d := range s.Demos {
			if d.Traffic != nil {
				b.WriteString("  " + d.Traffic.Line() + "\n")
			}
		}
	}
	if s.Kubelet != nil {
		b.WriteString(s.Kubelet.Lines())
	}
	return b.String()
}

// banner tells the user how to reach the control plane from another terminal.
func (s *Session) banner() string {
	kubectl := filepath.Join(s.opts.BinDir, "kubectl") + " --kubeconfig " + s.opts.KubeconfigPath
	var b strings.Builder
	fmt.Fprintf(&b, "pdtopo local control plane: up in %.1fs, API server %s\n", s.StartupTime.Seconds(), s.cp.URL())
	fmt.Fprintf(&b, "  from another terminal:  %s get pdp\n", kubectl)
	fmt.Fprintf(&b, "                          %s describe pdp <name>\n", kubectl)
	fmt.Fprintf(&b, "  logs:                   %s/{manager,kube-apiserver,etcd}.log\n", s.opts.LogDir)
	if s.manager != nil {
		fmt.Fprintf(&b, "  manager metrics:        %s\n", s.manager.MetricsURL)
	}
	for _, d := range s.Demos {
		switch {
		case d.Decode != nil:
			fmt.Fprintf(&b, "  decode pod:             %s get pod %s -o yaml   (Pending: no kubelet here)\n", kubectl, d.Decode.Pod.Name)
			fmt.Fprintf(&b, "                          %s\n", d.Decode.Summary())
		case d.DecodeErr != nil:
			fmt.Fprintf(&b, "  decode pod not shown:   %s: %v\n", d.File, d.DecodeErr)
		}
		switch {
		case d.Traffic != nil:
			fmt.Fprintf(&b, "  decode agent:           %s   (the pod's %s container, run as the kubelet would; log %s/%s)\n", strings.Join(d.Traffic.AgentArgv, " "), pdv1.AgentContainerName, s.opts.LogDir, d.Traffic.AgentLog)
			fmt.Fprintf(&b, "  prefill peer:           %s/%s; rooms are driven through the agent's unix sockets, one goroutine per engine rank\n", s.opts.LogDir, d.Traffic.PeerLog)
		case d.TrafficErr != nil:
			fmt.Fprintf(&b, "  KV handshakes not shown: %s: %v\n", d.File, d.TrafficErr)
		}
	}
	if s.Kubelet != nil {
		fmt.Fprintf(&b, "  your decode pods:       %s create -f <pod>   its agent runs here as the kubelet would (at most %d pods; logs %s/agent-<ns>-<pod>.log)\n", kubectl, MaxKubeletPods, s.opts.LogDir)
		fmt.Fprintf(&b, "  your prefill instances: %s -f <pdpair.yaml> --check-transfers --bootstrap-port 0 --announce %s   rooms go to every pod of its decode layout (counts below and in %s/rooms.log)\n",
			orText(s.opts.PeerPath, "bin/prefill-peer"), s.opts.PrefillsDir, s.opts.LogDir)
	}
	if s.SampleErr != nil {
		fmt.Fprintf(&b, "  refused samples:\n%s\n", indent(s.SampleErr.Error()))
	}
	if s.traffic() || s.Kubelet != nil {
		b.WriteString("Ctrl-C stops the agents, the prefill peers, the manager, kube-apiserver and etcd.\n")
	} else {
		b.WriteString("Ctrl-C stops the manager, kube-apiserver and etcd.\n")
	}
	return b.String()
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// traffic reports whether any demo drives rooms.
func (s *Session) traffic() bool {
	for _, d := range s.Demos {
		if d.Traffic != nil {
			return true
		}
	}
	return false
}
