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

// Command prefill-peer runs a prefill-side peer of the KV handshake: a
// bootstrap server and one ZMQ endpoint per prefill rank that answer decode
// ranks (a receiver agent, a decode engine) as the reference prefill does,
// without moving any KV bytes. For demos and manual tests; see --help.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pdtopo/pdtopo/internal/version"
)

const (
	exitOK    = 0
	exitError = 1 // the peer could not start
	exitUsage = 2 // bad flags or layout
)

func main() {
	if version.Handle("prefill-peer", os.Args[1:], os.Stdout) {
		return
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, stop))
}

// run starts the peer, prints where it listens, and serves until stop
// receives; then it prints what each rank saw.
func run(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	opts, code := parseFlags(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	p, err := startPeer(opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "prefill-peer: %v\n", err)
		return exitError
	}
	defer p.Close()
	printEndpoints(stdout, p, opts)
	if opts.announce != "" {
		path, err := announceSelf(opts, p.BootstrapAddr())
		if err != nil {
			fmt.Fprintf(stderr, "prefill-peer: --announce: %v\n", err)
			return exitError
		}
		defer os.Remove(path)
		fmt.Fprintf(stdout, "announced in %s\n", path)
	}
	select {
	case <-stop:
	case <-p.Dead():
		fmt.Fprintln(stdout, "the peer died (a room's behaviour was die)")
	}
	printCounts(stdout, p)
	return exitOK
}
