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
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// An agent knows its engine rank, not its decode TP rank: the two differ
// with decode DP attention (decode TP rank = engine rank % decode TP per DP
// group), and the TP size per group is only known from the index. These
// loaders read the index and the rank from one snapshot, so that a volume
// update between the two reads cannot pair a plan with another layout.

// LoadEngineRankFromDir is LoadRankFromDir for an engine rank.
func LoadEngineRankFromDir(dir string, engineRank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return transferplan.RoutePlan{}, transferplan.LayoutRecord{}, "", fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadEngineRank(src, engineRank)
}

// LoadEngineRank is LoadRank for an engine rank.
func LoadEngineRank(objects []Object, engineRank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	return loadEngineRank(newObjectSource(objects), engineRank)
}

func loadEngineRank(src source, engineRank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	idx, err := readIndex(src)
	if err != nil {
		return transferplan.RoutePlan{}, transferplan.LayoutRecord{}, "", err
	}
	if d := idx.Layout.Decode; engineRank < 0 || engineRank >= d.TPSize {
		return transferplan.RoutePlan{}, idx.Layout, idx.PlanHash, formatErrorf(ReasonRankOutOfRange,
			"engine rank %d is outside the decode fleet of %d ranks that the plans of %q were made for", engineRank, d.TPSize, idx.PDPair)
	}
	rank := engineRank % idx.Layout.Decode.TPPerDP()
	shard, entry, ok := idx.find(rank)
	if !ok { // check() guarantees every rank below DecodeTPSize is published
		return transferplan.RoutePlan{}, idx.Layout, idx.PlanHash, formatErrorf(ReasonRankOutOfRange, "decode TP rank %d is not published for %q", rank, idx.PDPair)
	}
	plan, _, err := readRank(src, shard, entry)
	return plan, idx.Layout, idx.PlanHash, err
}
