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
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"bytes"
	"errors"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
)

// contractWire is the cache-contract wire (docs/wire.md): each
// rank registers its contract, and plans every decode registration it gets
// with it as the engine's prefill does (contractrank.go, contractplan.go).
type contractWire struct {
	// served is the first rank's contract as the engine's server
	// re-encodes it (later ranks must register the same one); guarded by
	// the bootstrap server's mu.
	served []byte
}

func (*contractWire) validate(c *Config) error { return c.validateContracts() }

func (*contractWire) describe(c *Config) string {
	return fmt.Sprintf("cache-contract wire, a %d-byte contract", len(c.Contract))
}

func (*contractWire) registrationBody(c *Config, engineRank, port int) []byte {
	reg := c.contractRegistration(engineRank, port)
	return reg.MarshalPython()
}

func (*contractWire) newRank(c *Config, engineRank int) (rankWire, error) {
	return newContractRank(c, engineRank)
}

// file files a contract-era registration as the engine's server does: the
// contract must parse, and equal (re-encoded) the first one.
func (w *contractWire) file(b *bootstrapServer, body []byte) error {
	reg, err := kvcontract.DecodeRankRegistration(body)
	if err != nil {
		return err
	}
	contract, err := plancontract.Parse(reg.CacheLayout)
	if err != nil {
		return fmt.Errorf("CachePD bootstrap layout is invalid: %w", err)
	}
	b.mu.Lock()
	if w.served != nil && !bytes.Equal(w.served, contract.Canonical()) {
		b.mu.Unlock()
		return errors.New("CachePD prefill ranks registered incompatible layouts")
	}
	w.served = contract.Canonical()
	b.mu.Unlock()
	b.file(kvwire.RankFields{Role: reg.Role, WorldSize: reg.WorldSize, DPSize: reg.DPSize, RankIP: reg.RankIP, RankPort: reg.RankPort, EngineRank: reg.EngineRank}, nil)
	return nil
}

func (w *contractWire) parallelInfo(b *bootstrapServer) []byte {
	info := kvcontract.ParallelInfo{PrefillTPSize: b.worldSize, PrefillDPSize: b.dpSize, CacheLayout: w.served}
	return info.MarshalPython()
}

func (*contractWire) otherParallelInfo(b *bootstrapServer) []byte {
	return (&v1Wire{}).parallelInfo(b)
}

// rankContract is the contract engine rank r registers and plans with.
func (c *Config) rankContract(r int) []byte {
	if b, ok := c.RankContracts[r]; ok {
		return b
	}
	return c.Contract
}

// contractRegistration is the body engine rank r PUTs on the contract wire.
func (c *Config) contractRegistration(r, port int) kvcontract.RankRegistration {
	return kvcontract.RankRegistration{
		Role: kvwire.RolePrefill, WorldSize: c.WorldSize, DPSize: c.DPSize,
		RankIP: c.Host, RankPort: port, EngineRank: r, CacheLayout: c.rankContract(r),
	}
}

// validateContracts: every rank's contract parses as the engine parses it,
// and a DP group has at most plancontract.MaxTPSize TP ranks.
func (c *Config) validateContracts() error {
	if tp := c.WorldSize / c.DPSize; tp > plancontract.MaxTPSize {
		return fmt.Errorf("prefillpeer: %d TP ranks per DP group; the contract wire plans at most %d", tp, plancontract.MaxTPSize)
	}
	for rank := range c.RankContracts {
		if rank < 0 || rank >= c.WorldSize {
			return fmt.Errorf("prefillpeer: RankContracts names engine rank %d outside [0, %d)", rank, c.WorldSize)
		}
	}
	for rank := range c.WorldSize {
		if _, err := plancontract.Parse(c.rankContract(rank)); err != nil {
			return fmt.Errorf("prefillpeer: engine rank %d contract: %w", rank, err)
		}
	}
	return nil
}
