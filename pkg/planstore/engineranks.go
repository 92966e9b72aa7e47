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

// EngineRanks are the plans of the engine ranks one decode pod hosts, read
// from one snapshot of one publication: every rank of the pod runs the same
// plan set, never a mix of two.
type EngineRanks struct {
	// PDPair is the pair the plans were published for.
	PDPair   string
	Layout   transferplan.LayoutRecord
	PlanHash string
	// Plans[i] is the plan of the i-th engine rank asked for.
	Plans []transferplan.RoutePlan
}

// LoadEngineRanksFromDir loads several engine ranks' plans from a projected
// directory, resolving the kubelet's "..data" link once for all of them.
func LoadEngineRanksFromDir(dir string, engineRanks []int, opts ...LoadOption) (EngineRanks, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return EngineRanks{}, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadSealedEngineRanks(src, nil, engineRanks, optionsOf(opts))
}

// LoadEngineRanks is LoadEngineRanksFromDir for objects read through the API.
func LoadEngineRanks(objects []Object, engineRanks []int, opts ...LoadOption) (EngineRanks, error) {
	return loadSealedEngineRanks(newObjectSource(objects), nil, engineRanks, optionsOf(opts))
}

// LoadSealedEngineRanksFromDir is LoadEngineRanksFromDir for plans the
// operator sealed: the index must be the one seal names (its SHA-256), or
// nothing is loaded. The directory and the seal are read by the caller
// separately (they are separate volumes); see ReadSealDir.
func LoadSealedEngineRanksFromDir(dir string, seal Seal, engineRanks []int, opts ...LoadOption) (EngineRanks, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return EngineRanks{}, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadSealedEngineRanks(src, &seal, engineRanks, optionsOf(opts))
}

// LoadSealedEngineRanks is LoadSealedEngineRanksFromDir for objects read
// through the API.
func LoadSealedEngineRanks(objects []Object, seal Seal, engineRanks []int, opts ...LoadOption) (EngineRanks, error) {
	return loadSealedEngineRanks(newObjectSource(objects), &seal, engineRanks, optionsOf(opts))
}

func loadSealedEngineRanks(src source, seal *Seal, engineRanks []int, o loadOptions) (EngineRanks, error) {
	idx, err := readSealedIndex(src, seal)
	if err != nil {
		return EngineRanks{}, err
	}
	if err := o.checkDecode(idx); err != nil {
		return EngineRanks{}, err
	}
	return engineRanksOf(src, idx, engineRanks)
}

// engineRanksOf reads the engine ranks' plans of the set idx describes.
func engineRanksOf(src source, idx *Index, engineRanks []int) (EngineRanks, error) {
	out := EngineRanks{PDPair: idx.PDPair, Layout: idx.Layout, PlanHash: idx.PlanHash, Plans: make([]transferplan.RoutePlan, 0, len(engineRanks))}
	d := idx.Layout.Decode
	for _, engineRank := range engineRanks {
		if engineRank < 0 || engineRank >= d.TPSize {
			return out, formatErrorf(ReasonRankOutOfRange,
				"engine rank %d is outside the decode fleet of %d ranks that the plans of %q were made for (the pod hosts engine ranks %d..%d)",
				engineRank, d.TPSize, idx.PDPair, engineRanks[0], engineRanks[len(engineRanks)-1])
		}
		rank := engineRank % d.TPPerDP()
		shard, entry, ok := idx.find(rank)
		if !ok { // check() guarantees every rank below DecodeTPSize is published
			return out, formatErrorf(ReasonRankOutOfRange, "decode TP rank %d is not published for %q", rank, idx.PDPair)
		}
		plan, _, err := readRank(src, shard, entry)
		if err != nil {
			return out, err
		}
		out.Plans = append(out.Plans, plan)
	}
	return out, nil
}
