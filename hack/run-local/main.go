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

// Command run-local is `make run`: pdtopo's embedded local control plane. It
// starts etcd and kube-apiserver from bin/, installs the PDPair CRD, runs
// bin/manager against them (its admission webhooks on a local CA), applies
// config/samples, creates a labelled sample decode pod, runs that pod's
// injected agent (bin/receiver-agent, from the container's own spec) and a
// prefill peer (bin/prefill-peer), drives KV handshakes through the agent,
// plays the kubelet for every other decode pod the webhook admits (their
// agents, and rooms from the prefill instances announced in
// bin/local-prefills), writes bin/local.kubeconfig, and shows a live table of PDPairs and
// handshakes until Ctrl-C, which stops everything it started. With
// --rollout it is `make rollout-demo` instead: one pair's prefill and
// decode rollouts under traffic (localcp.Rollout), exiting non-zero when a
// room that should succeed failed.
//
// It lives under hack/ rather than cmd/ because it is a developer tool that
// needs a source checkout (CRDs, samples, the binaries `make` builds), not a
// product binary: `go build ./cmd/...` and the images build only what ships.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pdtopo/pdtopo/internal/localcp"
)

func main() {
	o := localcp.Defaults()
	// An own flag set: controller-runtime registers --kubeconfig on the global one.
	flags := flag.NewFlagSet("run-local", flag.ExitOnError)
	flags.StringVar(&o.BinDir, "bin", o.BinDir, "directory holding kube-apiserver and etcd")
	flags.StringVar(&o.CRDDir, "crds", o.CRDDir, "directory of CRD manifests to install")
	flags.StringVar(&o.SamplesDir, "samples", o.SamplesDir, "directory of sample manifests to apply")
	flags.BoolVar(&o.NoSamples, "no-samples", false, "apply no samples")
	flags.StringVar(&o.KubeconfigPath, "kubeconfig", o.KubeconfigPath, "where to write the admin kubeconfig")
	flags.StringVar(&o.LogDir, "logs", o.LogDir, "directory for the manager, kube-apiserver and etcd logs")
	flags.StringVar(&o.ManagerPath, "manager", o.ManagerPath, "manager binary to run; empty runs none")
	flags.StringVar(&o.WebhookDir, "webhooks", o.WebhookDir, "directory of the generated webhook configurations")
	flags.Func("decode-pod", "labelled decode pods to create once their PDPairs are Ready, comma-separated (default "+strings.Join(o.DecodePodFiles, ",")+")", func(v string) error {
		o.DecodePodFiles = strings.Split(v, ",")
		return nil
	})
	flags.StringVar(&o.PeerPath, "prefill-peer", o.PeerPath, "prefill-peer binary playing the decode pod's pair's prefill side; empty drives no rooms")
	flags.StringVar(&o.AgentPath, "agent", o.AgentPath, "receiver-agent binary run as the decode pod's pdtopo-agent container; empty drives no rooms")
	flags.StringVar(&o.PodIP, "pod-ip", "127.0.0.1", "the decode pod's IP as its agent sees it (a loopback address)")
	flags.StringVar(&o.PrefillsDir, "prefills", o.PrefillsDir, "directory where prefill instances announce themselves (prefill-peer --announce DIR); rooms go from each to the decode pods run here")
	flags.StringVar(&o.AgentImage, "agent-image", o.AgentImage, "receiver-agent image the webhook injects into decode pods")
	rollout := flags.Bool("rollout", false, "run the rollout scenario (make rollout-demo) instead of the live table: a prefill and a decode rollout of one pair under traffic; exits non-zero if a room that should succeed failed")
	rooms := flags.Int64("rollout-rooms", 10, "with --rollout: rooms each prefill instance sends each decode pod per step")
	hold := flags.Bool("rollout-hold", false, "with --rollout: after the summary, keep everything running until Ctrl-C")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "usage: run-local [flags] [-- manager flags]\n\n"+
			"Manager flags follow the defaults (--leader-elect=false and loopback metrics and probe\n"+
			"ports) and override them when repeated, e.g. -- --zap-log-level=debug.\n\n")
		flags.PrintDefaults()
	}
	_ = flags.Parse(os.Args[1:]) // ExitOnError
	if flags.NArg() > 0 {
		o.ManagerExtraArgs = flags.Args()
	}

	ctx, cancel := context.WithCancel(context.Background())
	go stopOnSignal(cancel)
	if *rollout {
		if _, err := localcp.Rollout(ctx, localcp.RolloutOptions{Options: o, RoomsPerStep: *rooms, Hold: *hold, Out: os.Stdout}); err != nil {
			fmt.Fprintf(os.Stderr, "run-local: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := localcp.Run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "run-local: %v\n", err)
		os.Exit(1)
	}
}

// stopOnSignal cancels on the first SIGINT or SIGTERM. Later signals do not
// kill this process (that would orphan kube-apiserver and etcd, which run in
// their own process groups); shutdown is bounded by the stop timeouts.
func stopOnSignal(cancel context.CancelFunc) {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	fmt.Fprintln(os.Stderr, "\nrun-local: stopping (agent, prefill peer, manager, kube-apiserver, etcd)…")
	cancel()
	for range sig {
		fmt.Fprintln(os.Stderr, "run-local: still stopping; each process gets at most 15s before it is killed")
	}
}
