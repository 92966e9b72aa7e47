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

package planstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// Streaming the plans rank by rank publishes exactly what encoding the
// planned set does, and sees every plan once, in order.
func TestEncodePlannerMatchesEncode(t *testing.T) {
	mla := kvLayout(16, 8, 4, 576, 576, 576)
	mla.Attention = transferplan.MLA
	for name, l := range map[string]planv1.Layout{
		"gqa P8→D4": kvLayout(8, 4, 80, 128, 256, 128), "P3→D2": kvLayout(3, 2, 5, 2, 3, 1),
		"mla P16→D8": mla, "P512→D1024": kvLayout(512, 1024, 200, 256, 128, 64),
	} {
		p, err := planv1.NewPlanner(l)
		if err != nil {
			t.Fatal(err)
		}
		var seen []int
		streamed, err := EncodePlanner("p", p, func(plan *transferplan.RoutePlan) { seen = append(seen, plan.DecodeTPRank) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		whole := mustEncode(t, "p", mustPlan(t, l))
		if len(streamed) != len(whole) {
			t.Fatalf("%s: %d objects streamed, %d from the set", name, len(streamed), len(whole))
		}
		for i := range whole {
			if streamed[i].Name != whole[i].Name || fmt.Sprint(streamed[i].Data) != fmt.Sprint(whole[i].Data) || !sameBinary(streamed[i].BinaryData, whole[i].BinaryData) {
				t.Fatalf("%s: object %d (%s) differs", name, i, whole[i].Name)
			}
		}
		if len(seen) != p.DecodeTPSize() || seen[len(seen)-1] != p.DecodeTPSize()-1 {
			t.Fatalf("%s: the callback saw ranks %v", name, seen)
		}
	}
}

func sameBinary(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// The packer refuses the rank that would open a 33rd shard: decode pods
// project MaxShardConfigMaps shard names, and stopping there bounds what an
// encoding holds. Incompressible 500 KB blobs take one shard each.
func TestShardLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, 500<<10)
	for i := range blob {
		blob[i] = byte(rng.Uint32())
	}
	k := &shardPacker{name: "p"}
	for rank := range MaxShardConfigMaps {
		if err := k.add(RankEntry{Rank: rank, Key: RankKey(rank)}, blob); err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	if len(k.objects) != MaxShardConfigMaps {
		t.Fatalf("%d shards for %d ranks of 500 KB", len(k.objects), MaxShardConfigMaps)
	}
	err := k.add(RankEntry{Rank: MaxShardConfigMaps, Key: RankKey(MaxShardConfigMaps)}, blob)
	assertFormatError(t, err, ReasonPlanTooLarge, fmt.Sprintf("fill %d shard ConfigMaps", MaxShardConfigMaps))
}

// An agent sizes the layout an index describes before reading any shard: an
// index whose layout makes rank plans larger than an agent loads is refused
// as PlanTooLarge, whatever its entries claim (here they claim 100 bytes).
func TestLoadRefusesAnIndexPastTheRankBudget(t *testing.T) {
	// Prefill TP 4096 → decode TP 1 over 8192 buffers: 33 million fragments
	// in the one decode rank's plan.
	hostile := kvLayout(4096, 1, 4096, 1, 4096, 1)
	objs := editIndex(t, mustEncode(t, "p", gqaP8D4(t)), func(idx *Index) {
		idx.Layout, idx.DecodeTPSize = hostile.Record(), 1
		idx.Shards = []Shard{{ConfigMap: "p-plans-0", FirstRank: 0, LastRank: 0,
			Ranks: []RankEntry{{Rank: 0, Key: RankKey(0), Size: 100, SHA256: strings.Repeat("0", 64)}}}}
	})[:1] // no shard at all: it must not be read
	_, _, _, err := LoadRank(objs, 0)
	assertFormatError(t, err, ReasonPlanTooLarge, "33554432 fragments")
	dir := t.TempDir()
	projectAtomically(t, dir, "1", objs)
	_, _, _, err = LoadRankFromDir(dir, 0)
	assertFormatError(t, err, ReasonPlanTooLarge, "an agent loads at most")
}
