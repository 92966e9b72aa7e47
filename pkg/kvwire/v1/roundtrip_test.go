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

package v1

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// gen draws valid messages from a seeded source, so that failures replay.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) gen { return gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g gen) int64() int64 {
	switch g.r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxInt64 - g.r.Int64N(3)
	default:
		return g.r.Int64N(1 << uint(g.r.IntN(62)+1))
	}
}

func (g gen) i64s() []int64 {
	n := g.r.IntN(5)
	if n == 0 {
		return nil
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = g.int64()
		if g.r.IntN(3) == 0 {
			out[i] = -out[i]
		}
	}
	return out
}

func (g gen) u64s() []uint64 {
	n := g.r.IntN(6)
	if n == 0 {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = g.r.Uint64()
	}
	return out
}

func (g gen) host() string {
	hosts := []string{"10.0.0.7", "127.0.0.1", "decode-3.llm.svc", "h"}
	return hosts[g.r.IntN(len(hosts))]
}

func (g gen) port() int { return 1 + g.r.IntN(65535) }

func (g gen) fragments() []transferplan.TransferFragment {
	n := g.r.IntN(4)
	if n == 0 {
		return nil
	}
	kinds := []transferplan.BufferKind{transferplan.TargetK, transferplan.TargetV, transferplan.DraftK, transferplan.DraftV, transferplan.MambaState}
	out := make([]transferplan.TransferFragment, n)
	for i := range out {
		out[i] = transferplan.TransferFragment{
			BufferIndex: g.r.IntN(200), BufferKind: kinds[g.r.IntN(len(kinds))], SrcRank: g.r.IntN(8), DstRank: g.r.IntN(8),
			SrcPageStrideBytes: g.int64(), DstPageStrideBytes: g.int64(), SrcByteOffset: g.int64(), DstByteOffset: g.int64(), BytesPerPage: g.int64(),
		}
		if g.r.IntN(2) == 0 {
			out[i].PageCount = transferplan.Count(g.int64())
		}
	}
	return out
}

func (g gen) registration() Registration {
	return Registration{DecodeIP: g.host(), DecodeStatusPort: g.port(), SessionID: g.host() + ":" + itoa(g.r.IntN(65536)),
		KVPtrs: g.u64s(), StatePtrs: g.u64s(), DecodePrefixLen: g.int64()}
}

func (g gen) request() Request {
	q := Request{Room: g.int64(), DecodeIP: g.host(), DecodeStatusPort: g.port(), SessionID: g.host() + ":" + itoa(g.r.IntN(65536)),
		RequiredDstInfoNum: 1 + g.r.IntN(16)}
	if g.r.IntN(4) == 0 {
		q.Dummy = true
		return q
	}
	q.KVIndices, q.AuxIndex, q.DecodePrefixLen = g.i64s(), g.int64(), g.int64()
	q.MambaIndices, q.Fragments = g.i64s(), g.fragments()
	if g.r.IntN(3) == 0 {
		q.MLAL15 = true
		if len(q.KVIndices) > 0 {
			q.PageTransferMask = make([]bool, len(q.KVIndices))
		}
		for i := range q.PageTransferMask {
			if g.r.IntN(2) == 0 {
				q.PageTransferMask[i] = true
				q.PageLocalIndices = append(q.PageLocalIndices, g.int64())
			}
		}
	}
	return q
}

func itoa(v int) string { return string(kvwire.AppendDecimal(nil, int64(v))) }

const roundTrips = 2000

func TestRegistrationRoundTrip(t *testing.T) {
	g := newGen(1)
	for range roundTrips {
		want := g.registration()
		if err := want.Validate(); err != nil {
			t.Fatalf("generated invalid %+v: %v", want, err)
		}
		got, err := DecodeRegistration(want.Frames())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %+v: %+v, %v", want, got, err)
		}
	}
}

func TestRequestRoundTrip(t *testing.T) {
	g := newGen(2)
	for range roundTrips {
		want := g.request()
		if err := want.Validate(); err != nil {
			t.Fatalf("generated invalid %+v: %v", want, err)
		}
		f := want.Frames()
		got, err := DecodeRequest(f)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %+v:\n got %+v, %v", want, got, err)
		}
		if again := got.Frames(); !equalFrames(again, f) {
			t.Fatalf("re-encoding differs:\n%q\n%q", again, f)
		}
	}
}

func TestBootstrapBodiesRoundTrip(t *testing.T) {
	g := newGen(4)
	lens := func() []int64 {
		n := g.r.IntN(4)
		out := make([]int64, n) // never nil: the Python encoding writes [] for both
		for i := range out {
			out[i] = 1 + g.r.Int64N(1<<20)
		}
		return out
	}
	for range roundTrips {
		dp := 1 << g.r.IntN(3)
		world := dp * (1 + g.r.IntN(8))
		kvItems, stateItems := lens(), lens()
		kvUnits, stateUnits := []int64{}, []int64{}
		if g.r.IntN(2) == 0 {
			kvUnits = make([]int64, len(kvItems))
			for i := range kvUnits {
				kvUnits[i] = 1 + g.r.Int64N(512)
			}
		}
		bl := BufferLens{KVItemLens: kvItems, KVUnitLens: kvUnits, StateItemLens: stateItems, StateUnitLens: stateUnits}
		reg := RankRegistration{Role: kvwire.RolePrefill, WorldSize: world, DPSize: dp, RankIP: g.host(), RankPort: g.port(), EngineRank: g.r.IntN(world), EnableMLAL15Cache: g.r.IntN(2) == 0, BufferLens: bl}
		if got, err := DecodeRankRegistration(reg.MarshalPython()); err != nil || !reflect.DeepEqual(got, reg) {
			t.Fatalf("registration %+v: %+v, %v", reg, got, err)
		}
		info := ParallelInfo{PrefillTPSize: world, PrefillDPSize: dp, EnableMLAL15Cache: reg.EnableMLAL15Cache, BufferLens: bl}
		if got, err := DecodeParallelInfo(info.MarshalPython()); err != nil || !reflect.DeepEqual(got, info) {
			t.Fatalf("parallel info %+v: %+v, %v", info, got, err)
		}
		addr := kvwire.RankAddress{RankIP: g.host(), RankPort: g.port()}
		if got, err := kvwire.DecodeRankAddress(addr.MarshalPython()); err != nil || got != addr {
			t.Fatalf("address %+v: %+v, %v", addr, got, err)
		}
	}
}

func (g gen) status() kvwire.Status {
	s := kvwire.Status{Room: g.int64(), State: kvwire.TransferPoll(g.r.IntN(6)), PrefillTPRank: g.r.IntN(1024), BootstrapToken: g.int64()}
	if g.r.IntN(3) == 0 {
		s.BootstrapToken = kvwire.NoBootstrapToken
	}
	for range g.r.IntN(4) {
		s.SpecCandidateIDs = append(s.SpecCandidateIDs, g.r.Int32()-math.MaxInt32/2)
	}
	return s
}
