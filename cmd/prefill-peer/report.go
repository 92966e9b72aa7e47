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

package main

import (
	"fmt"
	"io"
	"log"
	"net/netip"

	"github.com/pdtopo/pdtopo/internal/announce"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

func startPeer(opts options, stderr io.Writer) (*prefillpeer.Peer, error) {
	if !opts.quiet {
		logger := log.New(stderr, "prefill-peer: ", log.LstdFlags|log.Lmicroseconds)
		opts.cfg.Logf = logger.Printf
	}
	return prefillpeer.Start(opts.cfg)
}

// announceSelf writes the peer's announcement for `make run`: named by its
// prefill TP and port, so two instances never share a file.
func announceSelf(opts options, bootstrap string) (string, error) {
	ap, err := netip.ParseAddrPort(bootstrap)
	if err != nil {
		return "", err
	}
	c := opts.cfg
	in := announce.Instance{
		Name:      fmt.Sprintf("p%d-%d", c.WorldSize, ap.Port()),
		Bootstrap: bootstrap,
		Prefill:   fmt.Sprintf("tp=%d,dp=%d", c.WorldSize, max(c.DPSize, 1)),
		Decode:    opts.decode,
	}
	return announce.Write(opts.announce, in)
}

func printEndpoints(w io.Writer, p *prefillpeer.Peer, opts options) {
	c := opts.cfg
	fmt.Fprintf(w, "bootstrap %s  (prefill world %d, dp %d, %s, behaviour %s)\n",
		p.BootstrapAddr(), c.WorldSize, max(c.DPSize, 1), p.Layout(), c.Default.Action)
	for _, r := range p.Ranks() {
		fmt.Fprintf(w, "  engine rank %d (dp group %d, tp rank %d): %s\n", r.EngineRank, r.DPGroup, r.TPRank, r.Endpoint)
	}
}

func printCounts(w io.Writer, p *prefillpeer.Peer) {
	b := p.BootstrapCounts()
	fmt.Fprintf(w, "bootstrap: %d parallel-info, %d rank-address, %d health requests (%d bad)\n", b.ParallelInfo, b.RankAddress, b.Health, b.Bad)
	for _, r := range p.Ranks() {
		n := r.Counts()
		fmt.Fprintf(w, "engine rank %d: %d registrations, %d requests (%d dummy), %d rooms completed, %d statuses sent, %d errors\n",
			r.EngineRank, n.Registrations, n.Requests, n.Dummies, n.RoomsCompleted, n.StatusesSent, n.Errors)
	}
}
