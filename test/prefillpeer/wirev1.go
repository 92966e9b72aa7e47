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
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

// v1Wire is the v1 wire (docs/wire.md): each rank registers its buffer
// lengths, and takes the decode ranks' registrations (buffer pointers) and
// requests (page indices, fragments) as the reference's prefill does
// (rank.go, fragcheck.go, bytecheck.go).
type v1Wire struct {
	// From the last PUT, as the reference's _ingest_put_extra overwrites
	// them; guarded by the bootstrap server's mu.
	mla  bool
	lens kvv1.BufferLens
}

func (*v1Wire) validate(c *Config) error {
	for rank := range c.RankBuffers {
		if rank < 0 || rank >= c.WorldSize {
			return fmt.Errorf("prefillpeer: RankBuffers names engine rank %d outside [0, %d)", rank, c.WorldSize)
		}
	}
	for rank := 0; rank < c.WorldSize; rank++ {
		reg := c.registration(rank, 1) // any valid port: only the layout is checked here
		if err := reg.Validate(); err != nil {
			return fmt.Errorf("prefillpeer: engine rank %d buffers: %w", rank, err)
		}
	}
	return nil
}

func (*v1Wire) describe(c *Config) string {
	return fmt.Sprintf("%d kv + %d state buffers", len(c.Buffers.KVItemLens), len(c.Buffers.StateItemLens))
}

func (*v1Wire) registrationBody(c *Config, engineRank, port int) []byte {
	reg := c.registration(engineRank, port)
	return reg.MarshalPython()
}

func (*v1Wire) newRank(*Config, int) (rankWire, error) { return v1Rank{}, nil }

func (w *v1Wire) file(b *bootstrapServer, body []byte) error {
	reg, err := kvv1.DecodeRankRegistration(body)
	if err != nil {
		return err
	}
	f := kvwire.RankFields{Role: reg.Role, WorldSize: reg.WorldSize, DPSize: reg.DPSize, RankIP: reg.RankIP, RankPort: reg.RankPort, EngineRank: reg.EngineRank}
	b.file(f, func() { w.mla, w.lens = reg.EnableMLAL15Cache, reg.BufferLens })
	return nil
}

func (w *v1Wire) parallelInfo(b *bootstrapServer) []byte {
	info := kvv1.ParallelInfo{PrefillTPSize: b.worldSize, PrefillDPSize: b.dpSize, EnableMLAL15Cache: w.mla, BufferLens: w.lens}
	return info.MarshalPython()
}

func (*v1Wire) otherParallelInfo(b *bootstrapServer) []byte {
	return (&contractWire{served: []byte(`{}`)}).parallelInfo(b)
}

// v1Rank handles a v1 rank's messages (Rank.handleV1).
type v1Rank struct{}

func (v1Rank) handle(r *Rank, msg [][]byte) { r.handleV1(msg) }
