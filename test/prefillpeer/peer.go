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

package prefillpeer

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Peer is a running prefill instance: a bootstrap server and WorldSize ranks.
type Peer struct {
	cfg    Config
	wire   peerWire
	zctx   *zmq.Context
	boot   rendezvous
	ranks  []*Rank
	script *script
	// check executes transfers byte by byte when Config.Transfer is set.
	check *transferCheck

	dieOnce   sync.Once
	dead      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Start runs a peer for cfg: it binds every rank's PULL socket on a free
// port, starts the bootstrap server, and (unless DeferRegistration) has every
// rank PUT its registration to it over HTTP, as reference ranks do.
func Start(cfg Config) (*Peer, error) {
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	zctx, err := zmq.NewContext()
	if err != nil {
		return nil, fmt.Errorf("prefillpeer: zmq context: %w", err)
	}
	w, err := newPeerWire(c.Wire) // validate accepted the name
	if err != nil {
		_ = zctx.Term()
		return nil, err
	}
	p := &Peer{cfg: c, wire: w, zctx: zctx, script: newScript(c.Default), dead: make(chan struct{})}
	if c.Transfer != nil {
		p.check = newTransferCheck(*c.Transfer)
	}
	if c.RegisterWith != "" {
		p.boot = externalBootstrap{addr: c.RegisterWith} // validate parsed it
	} else if p.boot, err = startBootstrap(c.Host, c.BootstrapPort, w); err != nil {
		_ = zctx.Term()
		return nil, fmt.Errorf("prefillpeer: bootstrap server: %w", err)
	}
	for r := 0; r < c.WorldSize; r++ {
		rank, err := newRank(zctx, &p.cfg, w, r, p.script, func() { go p.Die() })
		if rank != nil {
			rank.check = p.check
		}
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("prefillpeer: engine rank %d: %w", r, err)
		}
		p.ranks = append(p.ranks, rank)
	}
	if !c.DeferRegistration {
		if err := p.RegisterRanks(); err != nil {
			_ = p.Close()
			return nil, err
		}
	}
	return p, nil
}

// RegisterRanks has every rank PUT its registration to the bootstrap server
// (the peer's own, or Config.RegisterWith's).
func (p *Peer) RegisterRanks() error {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for _, r := range p.ranks {
		body := p.wire.registrationBody(&p.cfg, r.EngineRank, r.Port)
		req, err := http.NewRequest(http.MethodPut, "http://"+p.boot.address()+kvwire.RoutePath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("prefillpeer: engine rank %d registering with %s: %w", r.EngineRank, p.boot.address(), err)
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("prefillpeer: engine rank %d registering with %s: %s: %.200s", r.EngineRank, p.boot.address(), resp.Status, answer)
		}
	}
	return nil
}

// Layout says in a line what the peer's ranks register: their buffers on
// the v1 wire, their contract on the cache-contract wire.
func (p *Peer) Layout() string { return p.wire.describe(&p.cfg) }

// BootstrapAddr is the host:port a decode side uses as bootstrap address:
// the peer's own server's, or Config.RegisterWith's.
func (p *Peer) BootstrapAddr() string { return p.boot.address() }

// Ranks returns the ranks by engine rank.
func (p *Peer) Ranks() []*Rank { return p.ranks }

// Rank returns engine rank r.
func (p *Peer) Rank(r int) *Rank { return p.ranks[r] }

// RankOf returns TP rank tpRank of dp group dpGroup.
func (p *Peer) RankOf(dpGroup, tpRank int) *Rank {
	return p.ranks[dpGroup*(p.cfg.WorldSize/p.cfg.DPSize)+tpRank]
}

// SetDefault changes the behaviour of rooms without a script.
func (p *Peer) SetDefault(b Behavior) {
	p.script.mu.Lock()
	p.script.fallback = b
	p.script.mu.Unlock()
}

// Script sets room's behaviour on every rank.
func (p *Peer) Script(room int64, b Behavior) {
	p.script.mu.Lock()
	p.script.rooms[room] = b
	p.script.mu.Unlock()
}

// ScriptRank sets room's behaviour on one engine rank, over Script.
func (p *Peer) ScriptRank(room int64, engineRank int, b Behavior) {
	p.script.mu.Lock()
	p.script.rankRoom[rankRoom{room, engineRank}] = b
	p.script.mu.Unlock()
}

// SetBootstrapFault makes the bootstrap server misbehave (zero value: not);
// a server the peer does not run (Config.RegisterWith) is left alone.
func (p *Peer) SetBootstrapFault(f BootstrapFault) { p.boot.setFault(f) }

// BootstrapCounts are the requests the bootstrap server has answered.
type BootstrapCounts struct {
	Puts, ParallelInfo, RankAddress, Health int64
	// Bad counts requests answered 400 or 500 for their own fault.
	Bad int64
}

// BootstrapCounts returns how often each bootstrap endpoint was asked (all
// zero for a server the peer does not run).
func (p *Peer) BootstrapCounts() BootstrapCounts { return p.boot.counts() }

// Die kills the peer as a crash would: the bootstrap server stops answering
// (connections are refused) and every rank's sockets close. Safe to call
// more than once and from any goroutine.
func (p *Peer) Die() {
	p.dieOnce.Do(func() {
		p.boot.close()
		var wg sync.WaitGroup
		for _, r := range p.ranks {
			wg.Go(r.stop)
		}
		wg.Wait()
		close(p.dead)
	})
}

// Dead is closed once the peer has died.
func (p *Peer) Dead() <-chan struct{} { return p.dead }

// Close stops everything and releases the ZMQ context.
func (p *Peer) Close() error {
	p.closeOnce.Do(func() {
		p.Die()
		p.closeErr = p.zctx.Term()
	})
	return p.closeErr
}
