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

package kvwire

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

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

func (g gen) status() Status {
	s := Status{Room: g.int64(), State: TransferPoll(g.r.IntN(6)), PrefillTPRank: g.r.IntN(1024), BootstrapToken: g.int64()}
	if g.r.IntN(3) == 0 {
		s.BootstrapToken = NoBootstrapToken
	}
	for range g.r.IntN(4) {
		s.SpecCandidateIDs = append(s.SpecCandidateIDs, g.r.Int32()-math.MaxInt32/2)
	}
	return s
}

const roundTrips = 2000

func TestStatusRoundTrip(t *testing.T) {
	g := newGen(3)
	for range roundTrips {
		want := g.status()
		got, err := DecodeStatus(want.Frames())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %+v: %+v, %v", want, got, err)
		}
	}
}
